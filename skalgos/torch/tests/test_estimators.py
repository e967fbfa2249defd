import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.base import clone  # noqa: E402
from sklearn.datasets import make_regression  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from torch import nn  # noqa: E402

from skalgos.torch import TorchClassifier, TorchRegressor  # noqa: E402
from skalgos.torch.optim import SGDScheduleFree, _registry  # noqa: E402


def test_nested_params_clone_and_set_params(iris):
    X, y = iris
    clf = TorchClassifier(
        module__hidden_sizes=(8, 8),
        optimizer__weight_decay=0.0,
        max_epochs=2,
        random_state=0,
    )
    params = clf.get_params()
    assert params["module__hidden_sizes"] == (8, 8)
    c2 = clone(clf)
    assert c2.get_params()["optimizer__weight_decay"] == 0.0
    c2.set_params(module__hidden_sizes=(5,), lr=0.01)
    c2.fit(X, y)
    assert c2.module_.net[0].out_features == 5
    assert c2.optimizer_.param_groups[0]["weight_decay"] == 0.0


def test_grid_search_list_of_grids_over_optimizers(iris):
    X, y = iris
    grid = [
        {"optimizer": ["muon"], "lr": [0.02, 0.05]},
        {"optimizer": ["adamw"], "lr": [1e-2], "optimizer__weight_decay": [0.0, 0.01]},
    ]
    search = GridSearchCV(TorchClassifier(max_epochs=5, random_state=0), grid, cv=2)
    search.fit(X, y)
    assert len(search.cv_results_["params"]) == 4
    assert search.best_params_["optimizer"] in ("muon", "adamw")


def test_unknown_optimizer_and_unknown_param(iris):
    X, y = iris
    with pytest.raises(ValueError, match="Registered names"):
        TorchClassifier(optimizer="adamx", max_epochs=1).fit(X, y)
    with pytest.raises(TypeError, match="prefixes"):
        TorchClassifier(hidden_sizes=(3,), max_epochs=1).fit(X, y)


class _ToySAM(torch.optim.Optimizer):
    """SAM-like: calls the closure twice per step (ascent, then descent)."""

    requires_closure = True

    def __init__(self, params, lr=0.1, rho=0.05):
        super().__init__(params, dict(lr=lr, rho=rho))
        self.closure_calls = 0

    def step(self, closure):
        loss = closure()
        self.closure_calls += 1
        with torch.no_grad():
            eps = []
            for g in self.param_groups:
                for p in g["params"]:
                    e = g["rho"] * p.grad / (p.grad.norm() + 1e-12)
                    p.add_(e)
                    eps.append(e)
        closure()
        self.closure_calls += 1
        with torch.no_grad():
            i = 0
            for g in self.param_groups:
                for p in g["params"]:
                    p.sub_(eps[i])
                    p.sub_(g["lr"] * p.grad)
                    i += 1
        return loss


def test_registry_plug_in_with_closure(iris, monkeypatch):
    X, y = iris
    monkeypatch.setitem(
        _registry._OPTIMIZERS, "toy_sam", _registry._from_class(_ToySAM)
    )
    clf = TorchClassifier(
        optimizer="toy_sam",
        lr=0.1,
        optimizer__rho=0.01,
        max_epochs=3,
        batch_size=50,
        random_state=0,
    ).fit(X, y)
    assert clf.optimizer_.closure_calls == 2 * clf.t_ == 2 * 9
    assert clf.score(X, y) > 0.7
    with pytest.raises(ValueError, match="already registered"):
        _registry.register_optimizer("adamw", torch.optim.AdamW)


def test_optimizer_class_and_factory(iris):
    X, y = iris
    clf = TorchClassifier(optimizer=torch.optim.RMSprop, lr=1e-2, max_epochs=2).fit(
        X, y
    )
    assert isinstance(clf.optimizer_, torch.optim.RMSprop)

    def factory(module, lr, **kw):
        return torch.optim.SGD(module.parameters(), lr=lr, momentum=0.5, **kw)

    clf = TorchClassifier(optimizer=factory, lr=0.1, max_epochs=2).fit(X, y)
    assert clf.optimizer_.param_groups[0]["momentum"] == 0.5


def test_schedule_free_mode_switch_and_batchnorm_recalibration(iris):
    X, y = iris
    clf = TorchClassifier(
        optimizer="sgd_sf",
        lr=0.5,
        module__batch_norm=True,
        max_epochs=4,
        batch_size=30,
        random_state=0,
    ).fit(X, y)
    assert isinstance(clf.optimizer_, SGDScheduleFree)
    assert clf.optimizer_.mode == "eval"  # parameters hold the average x
    # BatchNorm statistics were recomputed at x: the running mean equals the
    # mean of the pre-BN activations over the training set.
    lin, bn = clf.module_.net[0], clf.module_.net[1]
    with torch.no_grad():
        h = lin(torch.tensor(X, dtype=torch.float32))
    assert torch.allclose(bn.running_mean, h.mean(0), atol=1e-5)
    before = clf.predict_proba(X)
    clf.partial_fit(X, y)
    assert clf.optimizer_.mode == "eval" and clf.n_iter_ == 5
    assert not np.allclose(before, clf.predict_proba(X))


def test_history_verbose_partial_fit(iris, capsys):
    X, y = iris
    clf = TorchClassifier(max_epochs=3, verbose=1, batch_size=40, random_state=0).fit(
        X, y
    )
    out = capsys.readouterr().out
    assert out.count("[TorchClassifier] epoch=") == 3
    assert [h["epoch"] for h in clf.history_] == [1, 2, 3]
    assert {"train_loss", "lr", "dur"} <= set(clf.history_[0])
    assert clf.t_ == 3 * 4
    p = TorchClassifier(random_state=0)
    with pytest.raises(ValueError, match="classes"):
        p.partial_fit(X, y)
    p.partial_fit(X[:50], y[:50], classes=[0, 1, 2])
    p.partial_fit(X[50:], y[50:])
    assert p.n_iter_ == 2 and list(p.classes_) == [0, 1, 2]


def test_history_keeps_the_last_max_history_epochs(iris):
    # issue 39: history_ got one dict per epoch, so a long partial_fit stream
    # grew without bound; it is now a window of preallocated rows
    X, y = iris
    clf = TorchClassifier(max_history=5, batch_size=150, n_jobs=1, random_state=0)
    for _ in range(12):
        clf.partial_fit(X, y, classes=[0, 1, 2])
    h = clf.history_
    assert len(h) == 5 and clf.n_iter_ == 12
    assert [row["epoch"] for row in h] == [8, 9, 10, 11, 12]
    assert h[-1] == h[4] and h[0]["epoch"] == 8 and h[-5]["epoch"] == 8
    assert [row["epoch"] for row in h[1:3]] == [9, 10]
    with pytest.raises(IndexError):
        h[5]
    assert set(h[-1]) == {"epoch", "train_loss", "lr", "dur"}
    np.testing.assert_array_equal(h.column("epoch"), [8, 9, 10, 11, 12])
    assert h.column("train_loss").tolist() == [r["train_loss"] for r in h]
    # the whole history with None (and by default, below 10,000 epochs)
    full = TorchClassifier(max_history=None, batch_size=150, n_jobs=1, random_state=0)
    default = TorchClassifier(batch_size=150, n_jobs=1, random_state=0)
    for est in (full, default):
        for _ in range(12):
            est.partial_fit(X, y, classes=[0, 1, 2])
        assert [row["epoch"] for row in est.history_] == list(range(1, 13))

    # the kept rows are those of the full history (same seed, same epochs)
    def no_dur(rows):
        return [{k: v for k, v in r.items() if k != "dur"} for r in rows]

    assert no_dur(h) == no_dur(full.history_[-5:])
    # fit starts a new window
    clf.set_params(max_epochs=3).fit(X, y)
    assert [row["epoch"] for row in clf.history_] == [1, 2, 3]
    with pytest.raises(ValueError, match="max_history"):
        TorchClassifier(max_history=0).fit(X, y)


def test_history_survives_pickling_with_validation_rows(iris):
    import pickle

    X, y = iris
    clf = TorchClassifier(
        max_epochs=3, validation_fraction=0.2, max_history=2, n_jobs=1, random_state=0
    ).fit(X, y)
    assert [r["epoch"] for r in clf.history_] == [2, 3]
    assert all("valid_loss" in r for r in clf.history_)
    back = pickle.loads(pickle.dumps(clf))
    assert back.history_ == clf.history_


def test_early_stopping_stops_and_records_validation(iris):
    X, y = iris
    clf = TorchClassifier(
        early_stopping=True, n_iter_no_change=1, tol=1e9, max_epochs=50, random_state=0
    ).fit(X, y)
    # Epoch 1 improves on +inf; no later epoch can improve by tol=1e9.
    assert clf.n_iter_ == 2 and "valid_loss" in clf.history_[0]


def test_random_state_is_deterministic_and_global_rng_untouched(iris):
    X, y = iris
    state = torch.get_rng_state()
    a = TorchClassifier(max_epochs=2, module__dropout=0.2, random_state=3).fit(X, y)
    assert torch.equal(torch.get_rng_state(), state)
    b = TorchClassifier(max_epochs=2, module__dropout=0.2, random_state=3).fit(X, y)
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    c = TorchClassifier(max_epochs=2, random_state=4).fit(X, y)
    assert not np.array_equal(a.predict_proba(X), c.predict_proba(X))


class _Custom(nn.Module):
    def __init__(self, n_features_in, n_outputs, width=4):
        super().__init__()
        self.lin = nn.Linear(n_features_in, width)
        self.out = nn.Linear(width, n_outputs)

    def forward(self, x):
        return self.out(torch.tanh(self.lin(x)))


# two epochs: the point is building the module, not training it
@pytest.mark.filterwarnings(
    "ignore:.*class frequencies:sklearn.exceptions.ConvergenceWarning"
)
def test_custom_module_class_factory_and_instance(iris):
    X, y = iris
    clf = TorchClassifier(_Custom, module__width=6, max_epochs=2).fit(X, y)
    assert clf.module_.lin.out_features == 6
    clf = TorchClassifier(lambda: nn.Linear(4, 3), max_epochs=2).fit(X, y)
    assert isinstance(clf.module_, nn.Linear)
    inst = nn.Linear(4, 3)
    w = inst.weight.detach().clone()
    clf = TorchClassifier(inst, max_epochs=2).fit(X, y)
    assert torch.equal(inst.weight.detach(), w) and clf.module_ is not inst


def test_regressor_multi_output_and_muon_modular():
    X, Y = make_regression(
        n_samples=120, n_features=5, n_targets=2, noise=0.1, random_state=0
    )
    Y = Y / Y.std(0)
    reg = TorchRegressor(lr=1e-2, max_epochs=40, batch_size=16, random_state=0).fit(
        X, Y
    )
    assert reg.predict(X).shape == (120, 2) and reg.score(X, Y) > 0.9
    reg = TorchRegressor(
        optimizer="muon",
        optimizer__modular=True,
        lr=0.02,
        max_epochs=40,
        batch_size=16,
        random_state=0,
    ).fit(X, Y[:, 0])
    assert reg.predict(X).shape == (120,) and reg.score(X, Y[:, 0]) > 0.9


def test_schedulers(iris):
    X, y = iris
    clf = TorchClassifier(
        lr=0.01,
        scheduler="wsd",
        scheduler__cooldown_fraction=0.5,
        max_epochs=2,
        batch_size=50,
        random_state=0,
    ).fit(X, y)
    assert clf.optimizer_.param_groups[0]["lr"] == 0.0  # cooled down to 0
    clf = TorchClassifier(lr=0.01, scheduler="cosine", max_epochs=2, batch_size=50).fit(
        X, y
    )
    assert clf.optimizer_.param_groups[0]["lr"] < 1e-8


def test_import_without_torch_is_clear_and_core_does_not_import_torch():
    code = (
        "import sys; import skalgos; assert 'torch' not in sys.modules; "
        "sys.modules['torch'] = None\n"
        "try:\n    import skalgos.torch\nexcept ImportError as e:\n    print(e)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "skalgos[torch]" in res.stdout and "optional extra" in res.stdout


@pytest.mark.parametrize("optimizer", ["adamw", "muon", "sgd_sf"])
def test_pickle_round_trip_then_continue_training(iris, optimizer):
    import pickle

    X, y = iris
    a = TorchClassifier(optimizer=optimizer, lr=0.01, max_epochs=2, random_state=0)
    a.fit(X, y)
    b = pickle.loads(pickle.dumps(a))
    before = a.predict_proba(X)
    assert np.array_equal(before, b.predict_proba(X))
    assert all(g["lr"] > 0 for g in b.optimizer_.param_groups)
    a.partial_fit(X, y)
    b.partial_fit(X, y)
    # the continued copy trained (its weights moved) exactly like the original
    assert not np.allclose(before, b.predict_proba(X), rtol=0, atol=1e-6)
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))


def test_third_party_mode_switch_and_lbfgs(iris):
    X, y = iris
    schedulefree = pytest.importorskip("schedulefree")
    clf = TorchClassifier(
        optimizer=schedulefree.SGDScheduleFree, lr=0.5, max_epochs=3, random_state=0
    ).fit(X, y)
    # Detected from its train()/eval() methods; fit leaves it in eval mode.
    assert clf.optimizer_.param_groups[0]["train_mode"] is False
    clf = TorchClassifier(
        optimizer=torch.optim.LBFGS,
        lr=0.5,
        max_epochs=2,
        batch_size=150,
        random_state=0,
    ).fit(X, y)
    assert clf.score(X, y) > 0.8


def test_partial_fit_on_small_batches_does_not_warn_loss_grew():
    # the divergence warning compares the epochs of one call (same data); on
    # a stream of 2-row batches the losses of different batches differ by
    # orders of magnitude, and it used to warn on nearly every call
    import warnings

    from sklearn.datasets import make_classification

    from skalgos.torch import TorchClassifier

    X, y = make_classification(n_samples=120, n_features=6, random_state=0)
    X = X.astype(np.float32)
    est = TorchClassifier(random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(0, 120, 2):
            est.partial_fit(X[i : i + 2], y[i : i + 2], classes=[0, 1])
    grew = [w for w in caught if "training loss grew" in str(w.message)]
    assert not grew, str(grew[0].message)


def test_fit_that_diverges_still_warns_loss_grew():
    import warnings

    from sklearn.datasets import make_regression

    from skalgos.torch import TorchRegressor

    X, y = make_regression(n_samples=64, n_features=4, random_state=0)
    X = X.astype(np.float32)
    est = TorchRegressor(optimizer="sgd", lr=10.0, max_epochs=30, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    grew = [str(w.message) for w in caught if "training loss grew" in str(w.message)]
    assert len(grew) == 1 and "(epoch 1)" in grew[0], grew
