"""Fit-loop behaviour: failing loudly, schedules on continuation, callbacks."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from torch import nn  # noqa: E402

from skalgos.torch import TorchClassifier, TorchRegressor  # noqa: E402
from skalgos.torch._estimators import _resolve_device  # noqa: E402
from skalgos.torch.callbacks import Callback, Checkpoint, EarlyStopping  # noqa: E402
from skalgos.torch.lr_scheduler import extend_horizon, lr_factors  # noqa: E402


def _weights(est):
    return torch.cat([p.detach().reshape(-1).clone() for p in est.module_.parameters()])


# -- failing loudly -------------------------------------------------------------
def test_non_finite_loss_raises_naming_epoch_and_smaller_lr(iris):
    X, y = iris
    clf = TorchClassifier(optimizer="sgd", lr=1e6, n_jobs=1, random_state=0)
    with pytest.raises(FloatingPointError, match=r"epoch \d+.*smaller lr"):
        clf.fit(X, y)


class _PoisonAt(Callback):
    """Writes NaN into the first weight at the end of epoch ``epoch``."""

    def __init__(self, epoch):
        self.epoch = epoch

    def on_epoch_end(self, estimator, history):
        if history[-1]["epoch"] == self.epoch:
            with torch.no_grad():
                next(estimator.module_.parameters()).view(-1)[0] = float("nan")


def test_non_finite_loss_with_early_stopping_restores_best_and_warns(iris):
    X, y = iris
    clf = TorchClassifier(
        early_stopping=True,
        n_iter_no_change=50,
        max_epochs=10,
        callbacks=[_PoisonAt(3)],
        n_jobs=1,
        random_state=0,
    )
    with pytest.warns(ConvergenceWarning, match="restored the weights of epoch"):
        clf.fit(X, y)
    es = clf.callbacks_[0]
    assert isinstance(es, EarlyStopping) and es.best_epoch_ <= 3
    assert clf.n_iter_ == 4  # epoch 4 hit the NaN and stopped
    for k, v in clf.module_.state_dict().items():
        assert torch.equal(v, es.best_state_dict_[k])
    assert np.all(np.isfinite(clf.predict_proba(X)))


@pytest.mark.parametrize("lr", [0, 0.0, -1e-3])
def test_lr_must_be_positive(iris, lr):
    X, y = iris
    with pytest.raises(ValueError, match="lr"):
        TorchClassifier(lr=lr, max_epochs=1).fit(X, y)


def test_muon_without_hidden_matrices_warns(iris):
    X, y = iris
    clf = TorchClassifier(optimizer="muon", module__hidden_sizes=(), max_epochs=1)
    with pytest.warns(UserWarning, match="no parameter for Muon"):
        clf.fit(X, y)


@pytest.mark.parametrize("optimizer", ["kfac", "shampoo"])
def test_layerwise_without_linear_or_conv2d_layers_warns(optimizer):
    # An EmbeddingBag-only module: nothing for KFAC/Shampoo to precondition,
    # every parameter would take plain SGD steps.
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 10, size=(40, 5)), rng.integers(0, 2, size=40)

    def bag(n_outputs):
        return nn.EmbeddingBag(10, n_outputs, mode="mean")

    clf = TorchClassifier(bag, optimizer=optimizer, max_epochs=1, random_state=0)
    with pytest.warns(UserWarning, match=f"optimizer='{optimizer}' found no"):
        clf.fit(X, y)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        TorchClassifier(optimizer=optimizer, max_epochs=1, random_state=0).fit(
            rng.normal(size=(40, 3)), y
        )


def test_set_params_rejects_unknown_keys():
    clf = TorchClassifier()
    with pytest.raises(ValueError, match="not_a_param"):
        clf.set_params(not_a_param=1)
    clf.set_params(module__hidden_sizes=(3,), optimizer__weight_decay=0.0)
    assert clf.get_params()["module__hidden_sizes"] == (3,)


# -- schedulers on continuation ---------------------------------------------------
@pytest.mark.parametrize("scheduler", ["wsd", "cosine"])
@pytest.mark.parametrize("how", ["partial_fit", "warm_start"])
def test_schedule_continues_at_positive_lr(iris, scheduler, how):
    X, y = iris
    lr = 0.01
    clf = TorchClassifier(
        lr=lr,
        scheduler=scheduler,
        max_epochs=2,
        batch_size=50,
        n_jobs=1,
        random_state=0,
    ).fit(X, y)
    T0 = clf.t_
    assert T0 == 6 and all(row["lr"] > 0 for row in clf.history_)
    assert clf.optimizer_.param_groups[0]["lr"] == 0.0  # cooled down
    before = _weights(clf)
    if how == "partial_fit":
        clf.partial_fit(X, y)
    else:
        clf.set_params(warm_start=True, max_epochs=1).fit(X, y)
    T1 = clf.t_
    assert T1 == 9
    # the continuation's first step uses the re-planned rate at step T0
    if scheduler == "wsd":
        plan = extend_horizon(1.0, T0, T1, cooldown_fraction=0.2)
        factors = lr_factors("wsd", T1 + 1, cooldown_fraction=plan["cooldown_fraction"])
        expected = lr * plan["base_lr"] * factors[T0]
    else:
        expected = lr * lr_factors("cosine", T1 + 1)[T0]
        assert expected < lr  # continues, does not restart at the base rate
    assert clf.history_[-1]["lr"] == pytest.approx(expected, rel=1e-9)
    assert clf.history_[-1]["lr"] > 0
    assert not torch.allclose(before, _weights(clf))
    assert clf.optimizer_.param_groups[0]["lr"] == 0.0  # ends cooled down again


def test_wsd_partial_fit_one_step_per_call_always_trains(iris):
    X, y = iris
    clf = TorchClassifier(lr=0.01, scheduler="wsd", batch_size=150, random_state=0)
    clf.partial_fit(X, y, classes=[0, 1, 2])
    for _ in range(4):
        before = _weights(clf)
        clf.partial_fit(X, y)
        assert clf.history_[-1]["lr"] > 0
        assert not torch.allclose(before, _weights(clf))


# -- skorch parity -----------------------------------------------------------------
def test_callable_callback_gets_estimator_and_history_and_can_stop(iris):
    X, y = iris
    seen = []

    def cb(est, history):
        seen.append((est, len(history), history[-1]["epoch"]))
        return history[-1]["epoch"] == 3

    clf = TorchClassifier(max_epochs=10, callbacks=[cb], n_jobs=1, random_state=0)
    clf.fit(X, y)
    assert clf.n_iter_ == 3 and [s[1:] for s in seen] == [(1, 1), (2, 2), (3, 3)]
    assert all(s[0] is clf for s in seen)


def test_early_stopping_callback_restores_best(iris):
    X, y = iris
    es = EarlyStopping(monitor="valid_loss", patience=2, threshold=1e9)
    clf = TorchClassifier(
        max_epochs=20, validation_fraction=0.2, callbacks=[es], random_state=0
    ).fit(X, y)
    assert clf.n_iter_ == 3  # epoch 1 improves on inf, epochs 2-3 cannot
    assert es.best_state_dict_ is None if hasattr(es, "best_state_dict_") else True
    best = clf.callbacks_[0]
    assert best is not es and best.best_epoch_ == 1
    for k, v in clf.module_.state_dict().items():
        assert torch.equal(v, best.best_state_dict_[k])
    with pytest.raises(ValueError, match="validation_fraction"):
        TorchClassifier(max_epochs=2, callbacks=[EarlyStopping()]).fit(X, y)


def test_checkpoint_saves_best_and_load_validates(iris, tmp_path):
    X, y = iris
    path = tmp_path / "best.pt"
    cp = Checkpoint(monitor="train_loss", f_params=path)
    clf = TorchClassifier(max_epochs=4, callbacks=[cp], random_state=0).fit(X, y)
    best = clf.callbacks_[0]
    losses = [row["train_loss"] for row in clf.history_]
    assert best.best_epoch_ == int(np.argmin(losses)) + 1
    saved = torch.load(path, weights_only=True)
    assert all(torch.equal(saved[k], v) for k, v in best.best_state_dict_.items())
    other = TorchClassifier(max_epochs=1, random_state=1).fit(X, y)
    Checkpoint.load(other, path)
    for k, v in other.module_.state_dict().items():
        assert torch.equal(v, saved[k])
    small = TorchClassifier(max_epochs=1, module__hidden_sizes=(3,)).fit(X, y)
    with pytest.raises(ValueError, match="has shape .* but the module"):
        Checkpoint.load(small, path)
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="Could not read"):
        Checkpoint.load(other, bad)


def _saved(tmp_path, state, name="w.pt"):
    path = tmp_path / name
    torch.save(state, path)
    return path


def test_checkpoint_load_refuses_untrustworthy_state(iris, tmp_path):
    # issue 39: all-NaN weights loaded silently (NaN predictions), int64
    # weights were cast silently, and a state dict of another module gave
    # torch's RuntimeError; each is now a ValueError, the module untouched
    X, y = iris
    clf = TorchClassifier(max_epochs=1, n_jobs=1, random_state=0).fit(X, y)
    good = {k: v.clone() for k, v in clf.module_.state_dict().items()}
    before = clf.predict_proba(X)

    def refused(state, match):
        with pytest.raises(ValueError, match=match):
            Checkpoint.load(clf, _saved(tmp_path, state))
        for k, v in clf.module_.state_dict().items():
            assert torch.equal(v, good[k])
        np.testing.assert_array_equal(clf.predict_proba(X), before)

    nan = {k: torch.full_like(v, float("nan")) for k, v in good.items()}
    refused(nan, "NaN or infinite")
    one_inf = dict(good)
    key = next(iter(good))
    one_inf[key] = good[key].clone()
    one_inf[key].view(-1)[0] = float("inf")
    refused(one_inf, f"entry '{key}' holds 1 NaN or infinite")
    # float64 beyond float32's range overflows once cast: refused too
    huge = dict(good, **{key: good[key].double() * 1e300})
    refused(huge, "NaN or infinite values \\(in torch.float32\\)")
    ints = {k: v.round().to(torch.int64) for k, v in good.items()}
    refused(ints, "dtype torch.int64.*integer weights are refused")
    missing = dict(good)
    del missing[key]
    refused(missing, f"missing keys \\['{key}'\\]")
    refused(dict(good, extra=torch.zeros(2)), "unexpected keys \\['extra'\\]")
    refused(dict(good, **{key: torch.zeros(3, 3)}), f"entry '{key}' has shape")
    refused([1, 2], "does not hold a state_dict")
    # a state dict of other estimators: a regressor (1 output, not 3) and a
    # deeper module (keys the classifier's module lacks)
    reg = TorchRegressor(max_epochs=1, n_jobs=1, random_state=0).fit(X, y)
    refused(reg.module_.state_dict(), "has shape .* another architecture")
    deep = TorchClassifier(
        max_epochs=1, n_jobs=1, module__hidden_sizes=(8, 8), random_state=0
    ).fit(X, y)
    refused(deep.module_.state_dict(), "does not match the module")
    # a float64 copy of good weights is fine (cast to the module's float32)
    Checkpoint.load(clf, _saved(tmp_path, {k: v.double() for k, v in good.items()}))
    np.testing.assert_allclose(clf.predict_proba(X), before, rtol=1e-6)


def test_checkpoint_load_needs_a_fitted_estimator(tmp_path):
    path = _saved(tmp_path, {"w": torch.zeros(1)})
    with pytest.raises(ValueError, match="needs a fitted estimator"):
        Checkpoint.load(TorchClassifier(), path)


class _NormRecordingSGD(torch.optim.SGD):
    def __init__(self, params, **kw):
        super().__init__(params, **kw)
        self.norms = []

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        grads = [p.grad for g in self.param_groups for p in g["params"]]
        self.norms.append(
            float(
                torch.linalg.vector_norm(
                    torch.stack(
                        [torch.linalg.vector_norm(g) for g in grads if g is not None]
                    )
                )
            )
        )
        super().step()
        return loss


def test_gradient_clip_bounds_the_gradient_norm(iris):
    X, y = iris
    clf = TorchClassifier(
        optimizer=_NormRecordingSGD, lr=0.1, max_epochs=2, random_state=0
    ).fit(X, y)
    assert max(clf.optimizer_.norms) > 1e-2
    clf = TorchClassifier(
        optimizer=_NormRecordingSGD,
        lr=0.1,
        gradient_clip=1e-2,
        max_epochs=2,
        random_state=0,
    ).fit(X, y)
    assert max(clf.optimizer_.norms) <= 1e-2 * (1 + 1e-5)


def test_validation_split_without_early_stopping(iris):
    X, y = iris
    clf = TorchClassifier(
        validation_fraction=0.2, max_epochs=4, batch_size=40, random_state=0
    ).fit(X, y)
    assert clf.n_iter_ == 4 and all("valid_loss" in row for row in clf.history_)
    assert clf.t_ == 4 * 3  # 120 training rows in batches of 40
    reg = TorchRegressor(validation_fraction=0.25, max_epochs=2, batch_size=30)
    reg.fit(X[:, :3], X[:, 3])
    assert all("valid_loss" in row for row in reg.history_)


def test_device_auto(iris, monkeypatch):
    X, y = iris
    clf = TorchClassifier(device="auto", max_epochs=1).fit(X, y)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert clf.device_.type == expected
    assert next(clf.module_.parameters()).device.type == expected
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert _resolve_device("auto") == torch.device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert _resolve_device("auto") == torch.device("cpu")
    with pytest.raises(ValueError, match="device"):
        TorchClassifier(device="gpu0", max_epochs=1).fit(X, y)


def test_verbose_lines_start_with_the_estimator_name(iris, capsys):
    X, y = iris
    TorchRegressor(max_epochs=2, verbose=1).fit(X[:, :3], X[:, 3])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(s.startswith("[TorchRegressor] ") for s in lines)


def test_callbacks_must_be_callables_or_hooks(iris):
    X, y = iris
    with pytest.raises(TypeError, match="callbacks"):
        TorchClassifier(callbacks=[3], max_epochs=1).fit(X, y)


def test_symo_default_module_is_bias_free(iris):
    X, y = iris
    clf = TorchClassifier(optimizer="symo", max_epochs=40, random_state=0).fit(X, y)
    assert all(
        m.bias is None for m in clf.module_.modules() if isinstance(m, nn.Linear)
    )
    assert clf.score(X, y) > 0.9


@pytest.fixture(scope="module")
def wine_split():
    from sklearn.datasets import load_wine
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_wine(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=0.25, random_state=0, stratify=y
    )
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte), ytr, yte


def _default_accuracy(optimizer, data):
    Xtr, Xte, ytr, yte = data
    clf = TorchClassifier(optimizer=optimizer, n_jobs=1, random_state=0)
    return clf.fit(Xtr, ytr).score(Xte, yte), clf


@pytest.mark.parametrize(
    "optimizer", __import__("skalgos.torch.optim").torch.optim.available_optimizers()
)
def test_every_registry_name_trains_with_its_defaults(optimizer, wine_split):
    # lr="auto" resolves per name; each must come within 5 points of AdamW's
    # test accuracy with every other setting left at its default.
    from skalgos.torch.optim import default_lr

    reference, _ = _default_accuracy("adamw", wine_split)
    acc, clf = _default_accuracy(optimizer, wine_split)
    assert clf.lr_ == default_lr(optimizer)
    assert acc >= reference - 0.05, (optimizer, acc, reference)


def test_warns_when_training_ends_no_better_than_the_class_priors(iris):
    X, y = iris
    Xraw = np.exp(4 * X) * np.logspace(0, 3, 4)  # skewed, badly scaled features
    clf = TorchClassifier(
        optimizer="sgd", lr=1.0, max_epochs=5, n_jobs=1, random_state=0
    )
    with pytest.warns(ConvergenceWarning, match="class frequencies"):
        clf.fit(Xraw, y)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        TorchClassifier(max_epochs=5, n_jobs=1, random_state=0).fit(X, y)


def test_regressor_warns_when_training_ends_no_better_than_the_mean():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = 1e3 + 50 * X[:, 0]  # far from standardised: MSE of the mean is 2500
    reg = TorchRegressor(
        optimizer="adamw",
        max_epochs=3,
        standardize_target=False,
        n_jobs=1,
        random_state=0,
    )
    with pytest.warns(ConvergenceWarning, match="standardize_target=True"):
        reg.fit(X, y)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        # the defaults (standardised target, max_epochs="auto" with the
        # training-loss plateau rule) fit this linear target almost exactly
        reg = TorchRegressor(n_jobs=1, random_state=0).fit(X, y)
        assert reg.score(X, y) > 0.99
        assert reg.n_iter_ < reg.max_epochs_  # the plateau rule stopped it

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        TorchRegressor(max_epochs=20, n_jobs=1, random_state=0).fit(X, X[:, 0])


@pytest.mark.parametrize("Est", [TorchClassifier, TorchRegressor])
def test_sample_weight_equals_repeated_rows_in_float64(Est):
    # sklearn's own check: integer weights act as repeated rows (one full
    # batch, so the batch order cannot differ; float64, so rounding cannot)
    from sklearn.utils.estimator_checks import (
        check_sample_weight_equivalence_on_dense_data,
    )

    est = Est(
        lr=1e-2,
        max_epochs=40,
        batch_size=32,
        early_stopping=False,
        dtype="float64",
        n_jobs=1,
        random_state=0,
    )
    check_sample_weight_equivalence_on_dense_data(Est.__name__, est)


@pytest.mark.parametrize(
    "name", __import__("skalgos.torch.optim", fromlist=["x"]).available_optimizers()
)
def test_every_optimizer_name_trains_at_defaults_on_real_data(name):
    # issue 34: lr="auto" and max_epochs="auto" give every registered name a
    # sensible fit on raw diabetes (Ridge: 0.358) and on iris (MLP: 0.974)
    import warnings

    from sklearn.datasets import load_diabetes, load_iris
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    for load, Est, floor in (
        (load_diabetes, TorchRegressor, 0.30),
        (load_iris, TorchClassifier, 0.92),
    ):
        X, y = load(return_X_y=True)
        Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
        model = make_pipeline(
            StandardScaler(), Est(optimizer=name, n_jobs=1, random_state=0)
        )
        with warnings.catch_warnings():
            # a module warning (e.g. symo's bias-free MLP) is not the point here
            warnings.simplefilter("ignore", UserWarning)
            model.fit(Xtr, ytr)
        assert model.score(Xte, yte) > floor, (Est.__name__, name)
