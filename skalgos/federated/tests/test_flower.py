"""The Flower adapter runs the simulator's maths: hand-built messages, no Ray
(one smoke test runs Flower's Ray simulation engine).

Flower and Ray are optional: without them these tests skip, unless the
environment variable ``SKALGOS_REQUIRE_EXTRAS`` names them (comma-separated,
e.g. ``flwr,ray``), as CI sets it: then a missing install fails loudly
instead of skipping."""

import importlib
import importlib.util
import logging
import os

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import scale


def _required(name):
    return name in os.environ.get("SKALGOS_REQUIRE_EXTRAS", "").split(",")


if _required("flwr"):
    importlib.import_module("flwr")  # CI: a missing Flower is a failure
else:
    pytest.importorskip("flwr")

from flwr.app import (  # noqa: E402
    Array,
    ArrayRecord,
    ConfigRecord,
    Message,
    MetricRecord,
    RecordDict,
)

from skalgos.federated import (  # noqa: E402
    AdaMasFL,
    FedAsync,
    FedAvg,
    FedBuff,
    FedECADO,
    FederatedClassifier,
    FederatedRegressor,
    FedExP,
    FedNova,
    FedProx,
    MasFL,
)
from skalgos.federated._kernels import local_sgd  # noqa: E402
from skalgos.federated.flower import (  # noqa: E402
    FlowerStrategy,
    InProcessGrid,
    estimator_from_arrays,
    initial_arrays,
    make_client_app,
    run_async,
)
from skalgos.federated.flower._records import decode_local  # noqa: E402

logging.getLogger("flwr").setLevel(logging.WARNING)

STEPS = [1, 3, 5, 8]
LR = 0.1
SYNC = [
    FedAvg(server_lr=0.9),
    FedProx(mu=0.1),
    FedNova(),
    FedExP(),
    FedECADO(),
    FedECADO(inductance=0.5, window_max=1.0, sensitivity="processed"),
]


def _iris():
    X, y = load_iris(return_X_y=True)
    cid = np.arange(150) % 4
    cid[y == 0] = 0  # unequal client sizes
    return scale(X), y, cid


def _simulator(strategy, X, y, cid, **kw):
    """The simulator's own data, context, state and start model."""
    est = FederatedClassifier(
        strategy,
        partition="given",
        local_steps=STEPS,
        learning_rate=LR,
        batch_size=None,
        random_state=0,
        **kw,
    )
    est._validate_params()
    data, ctx = est._setup(X, y, cid, None, True)
    return est, data, ctx


def _replies(messages, data):
    """Replies computed with local_sgd on the simulator's (batched) data."""
    c = data.X.shape[0]
    per = [decode_local(m.content["config"], m.content.get("local")) for m in messages]
    kw = {}
    for name, value in per[0].items():
        if isinstance(value, np.ndarray):
            kw[name] = np.concatenate([p[name] for p in per], axis=0)
        else:
            kw[name] = value
    W0 = np.stack([m.content["arrays"]["W"].numpy() for m in messages])
    steps = np.array([m.content["config"]["local-steps"] for m in messages])
    lr = messages[0].content["config"]["learning-rate"]
    out = local_sgd(data, W0, steps, lr, np.random.RandomState(0), **kw)
    replies = []
    for i, msg in enumerate(messages):
        content = RecordDict(
            {
                "arrays": ArrayRecord(
                    {k: Array(out[k][i]) for k in ("W", "last_dir", "mean_grad")}
                ),
                "metrics": MetricRecord(
                    {
                        "num-examples": int(data.n[i]),
                        "n-steps": float(out["n_steps"][i]),
                        "tau": float(out["tau"][i]),
                        "train-loss": 0.0,
                    }
                ),
            }
        )
        replies.append(Message(content, reply_to=msg))
    assert len(replies) == c
    return replies[::-1]  # arrival order must not matter


@pytest.fixture(scope="module")
def iris():
    return _iris()


def _grid(X, y, cid, **kw):
    return InProcessGrid(make_client_app(X, y, client_id=cid), n_nodes=4, **kw)


def test_configure_train_one_message_per_node(iris):
    X, y, cid = iris
    grid = _grid(X, y, cid)
    strat = FlowerStrategy(FedECADO(), learning_rate=LR, local_steps=STEPS)
    W0 = initial_arrays(4, 3)
    msgs = list(strat.configure_train(1, W0, ConfigRecord({"extra": 7}), grid))
    assert sorted(m.metadata.dst_node_id for m in msgs) == grid.get_node_ids()
    for j, m in enumerate(msgs):
        cfg = m.content["config"]
        assert cfg["local-steps"] == STEPS[j] and cfg["learning-rate"] == LR
        assert cfg["server-round"] == 1 and cfg["extra"] == 7
        assert cfg["batch-size"] == 0 and "seed" not in cfg
        assert cfg["local.ecado.window"] == pytest.approx(LR * np.mean(STEPS))
        np.testing.assert_array_equal(
            m.content["arrays"]["W"].numpy(), np.zeros((5, 3))
        )
        assert m.content["local"]["correction"].numpy().shape == (5, 3)
    prox = FlowerStrategy(FedProx(mu=0.3), local_steps=2, batch_size=8)
    W = ArrayRecord({"W": Array(np.ones((5, 3)))})
    msgs = list(prox.configure_train(1, W, ConfigRecord(), grid))
    assert {m.content["config"]["local.prox_mu"] for m in msgs} == {0.3}
    assert all("seed" in m.content["config"] for m in msgs)
    for m in msgs:
        np.testing.assert_array_equal(m.content["local"]["anchor"].numpy(), 1.0)
    avg = FlowerStrategy(FedAvg())
    assert all(
        "local" not in m.content
        for m in avg.configure_train(1, W, ConfigRecord(), grid)
    )


@pytest.mark.parametrize("strategy", SYNC, ids=repr)
def test_aggregate_train_is_the_simulators_sync_round(iris, strategy):
    X, y, cid = iris
    est, data, ctx = _simulator(strategy, X, y, cid)
    sim, state, W = est.strategy_, est.strategy_state_, est._W
    grid = _grid(X, y, cid)
    fl = FlowerStrategy(strategy, learning_rate=LR, local_steps=STEPS)
    arrays = initial_arrays(4, 3)
    for rnd in range(1, 4):
        W = sim._sync_round(state, ctx, data, W, np.asarray(STEPS))
        msgs = list(fl.configure_train(rnd, arrays, ConfigRecord(), grid))
        arrays, metrics = fl.aggregate_train(rnd, _replies(msgs, data))
        np.testing.assert_array_equal(arrays["W"].numpy(), W)
        assert {"n-steps", "tau", "train-loss"} <= set(metrics)
    np.testing.assert_array_equal(
        fl.model_arrays(arrays)["W"].numpy(), sim._model(state, W)
    )
    if isinstance(strategy, FedECADO):
        np.testing.assert_array_equal(fl.state_["flows"], state["flows"])
        assert fl.state_["windows"] == state["windows"]
        assert np.abs(state["flows"]).max() > 0


@pytest.mark.parametrize("batch_size", [None, 16])
def test_client_train_handler_reproduces_local_sgd(iris, batch_size):
    X, y, cid = iris
    est, data, ctx = _simulator(FedECADO(), X, y, cid)
    grid = _grid(X, y, cid)
    fl = FlowerStrategy(FedECADO(), local_steps=STEPS, batch_size=batch_size)
    arrays = initial_arrays(4, 3)
    for rnd in (1, 2):  # round 2 carries non-zero flow corrections
        msgs = list(fl.configure_train(rnd, arrays, ConfigRecord(), grid))
        replies = grid.send_and_receive(msgs)
        arrays, _ = fl.aggregate_train(rnd, replies)
    for j, msg in enumerate(msgs):
        cfg = msg.content["config"]
        kw = decode_local(cfg, msg.content.get("local"))
        ref = local_sgd(
            data.subset([j]),
            msg.content["arrays"]["W"].numpy()[None],
            np.array([cfg["local-steps"]]),
            cfg["learning-rate"],
            np.random.RandomState(cfg.get("seed", 0)),
            batch_size=batch_size,
            **kw,
        )
        reply = next(r for r in replies if r.metadata.src_node_id == grid.node_ids[j])
        got = reply.content["arrays"]
        np.testing.assert_allclose(
            got["W"].numpy(), ref["W"][0], rtol=1e-12, atol=1e-14
        )
        np.testing.assert_allclose(
            got["last_dir"].numpy(), ref["last_dir"][0], rtol=1e-12, atol=1e-14
        )
        m = reply.content["metrics"]
        assert m["num-examples"] == data.n[j]
        assert m["n-steps"] == float(ref["n_steps"][0])
        assert m["tau"] == pytest.approx(float(ref["tau"][0]), rel=1e-14)


@pytest.mark.parametrize("strategy", [FedECADO(), FedExP(), FedNova()], ids=repr)
def test_strategy_start_on_in_process_grid_is_the_simulator(iris, strategy):
    X, y, cid = iris
    kw = dict(partition="given", local_steps=STEPS, learning_rate=LR, batch_size=None)
    est = FederatedClassifier(strategy, n_rounds=4, **kw).fit(X, y, client_id=cid)
    fl = FlowerStrategy(strategy, learning_rate=LR, local_steps=STEPS)
    res = fl.start(_grid(X, y, cid), initial_arrays(4, 3), num_rounds=4)
    model = fl.model_arrays(res.arrays)
    np.testing.assert_allclose(model["W"].numpy(), est._coef_xp, rtol=1e-12, atol=1e-14)
    # federated evaluation: the num-examples weighted loss is the simulator's
    assert res.evaluate_metrics_clientapp[4]["loss"] == pytest.approx(
        est.history_[-1]["loss"], rel=1e-10
    )
    assert res.evaluate_metrics_clientapp[4]["accuracy"] == pytest.approx(
        est.history_[-1]["accuracy"], rel=1e-10
    )
    clf = estimator_from_arrays(model, classes=est.classes_)
    np.testing.assert_array_equal(clf.predict(X), est.predict(X))
    np.testing.assert_allclose(clf.predict_proba(X), est.predict_proba(X))


def test_weighted_nodes_are_the_weighted_simulator(iris):
    """sample_weight given to the ClientApp: each node's loss is its weighted
    mean and its reply weighs its total weight, as in the simulator."""
    X, y, cid = iris
    sw = np.random.RandomState(0).randint(1, 4, size=len(y)).astype(float)
    kw = dict(partition="given", local_steps=STEPS, learning_rate=LR, batch_size=None)
    est = FederatedClassifier(FedECADO(), n_rounds=3, **kw)
    est.fit(X, y, client_id=cid, sample_weight=sw)
    fl = FlowerStrategy(FedECADO(), learning_rate=LR, local_steps=STEPS)
    grid = InProcessGrid(
        make_client_app(X, y, client_id=cid, sample_weight=sw), n_nodes=4
    )
    res = fl.start(grid, initial_arrays(4, 3), num_rounds=3)
    W = fl.model_arrays(res.arrays)["W"].numpy()
    np.testing.assert_allclose(W, est._coef_xp, rtol=1e-12, atol=1e-14)
    unweighted = FederatedClassifier(FedECADO(), n_rounds=3, **kw)
    unweighted.fit(X, y, client_id=cid)
    assert np.abs(W - unweighted._coef_xp).max() > 1e-3


def test_partial_participation_keeps_absent_clients_flows(iris):
    X, y, cid = iris
    grid = _grid(X, y, cid)
    fl = FlowerStrategy(
        FedECADO(), local_steps=3, fraction_train=0.5, min_train_nodes=2
    )
    arrays = initial_arrays(4, 3)
    for rnd in range(1, 4):
        msgs = list(fl.configure_train(rnd, arrays, ConfigRecord(), grid))
        assert len(msgs) == 2
        before = fl.state_["flows"].copy()
        arrays, _ = fl.aggregate_train(rnd, grid.send_and_receive(msgs))
        sent = {fl.node_ids_.index(m.metadata.dst_node_id) for m in msgs}
        for i in set(range(4)) - sent:
            np.testing.assert_array_equal(fl.state_["flows"][i], before[i])
    assert np.isfinite(arrays["W"].numpy()).all()


@pytest.mark.parametrize(
    "strategy",
    [FedAsync(), FedBuff(buffer_size=2), MasFL(buffer_size=2), AdaMasFL(buffer_size=3)],
    ids=repr,
)
def test_run_async_is_the_simulators_event_loop(iris, strategy):
    X, y, cid = iris
    est = FederatedClassifier(
        strategy,
        partition="given",
        n_rounds=3,
        local_steps=3,
        batch_size=None,
        concurrency=2,
        random_state=0,
    ).fit(X, y, client_id=cid)
    # the simulator draws the client speeds first, then runs the clock
    rng = np.random.RandomState(0)
    speeds = rng.lognormal(0.0, 1.0, size=4)
    grid = _grid(
        X, y, cid, durations=lambda j, m: m.content["config"]["local-steps"] * speeds[j]
    )
    res = run_async(
        grid,
        strategy,
        initial_arrays(4, 3),
        n_rounds=3,
        concurrency=2,
        local_steps=3,
        random_state=rng,
    )
    np.testing.assert_allclose(
        res.arrays["W"].numpy(), est._coef_xp, rtol=1e-12, atol=1e-14
    )
    for rnd, rec in res.train_metrics_clientapp.items():
        assert rec["staleness-mean"] == est.history_[rnd - 1]["staleness_mean"]
        assert rec["staleness-max"] == est.history_[rnd - 1]["staleness_max"]
    assert grid.time == pytest.approx(est._time)


def test_run_async_without_clock_and_with_minibatches(iris):
    X, y, cid = iris
    res = run_async(
        _grid(X, y, cid),
        "adamasfl",
        initial_arrays(4, 3),
        n_rounds=2,
        concurrency=3,
        local_steps="uniform",
        batch_size=16,
        random_state=0,
    )
    assert sorted(res.train_metrics_clientapp) == [1, 2]
    assert all(r["staleness-max"] >= 0 for r in res.train_metrics_clientapp.values())
    assert np.isfinite(res.arrays["W"].numpy()).all()


def test_estimator_from_arrays_regressor_and_mlp():
    rng = np.random.RandomState(0)
    X = rng.randn(80, 3)
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3
    reg = FederatedRegressor(n_clients=2, n_rounds=3, random_state=0).fit(X, y)
    rec = ArrayRecord({"W": Array(np.asarray(reg._coef_xp))})
    back = estimator_from_arrays(rec)
    np.testing.assert_allclose(back.predict(X), reg.predict(X))
    np.testing.assert_allclose(back.coef_, reg.coef_)
    Xc, yc, cid = _iris()
    mlp = FederatedClassifier(model="mlp", hidden_units=4, n_rounds=2, random_state=0)
    mlp.fit(Xc, yc)
    rec = ArrayRecord({"W": Array(np.asarray(mlp._coef_xp))})
    back = estimator_from_arrays(rec, classes=[0, 1, 2], model="mlp", hidden_units=4)
    np.testing.assert_allclose(back.predict_proba(Xc), mlp.predict_proba(Xc))
    start = initial_arrays(4, 3, model="mlp", hidden_units=4, random_state=0)
    assert start["W"].numpy().shape == mlp._coef_xp.shape
    with pytest.raises(ValueError, match="outputs"):
        estimator_from_arrays(rec, classes=[0, 1, 2])


def test_bad_input(iris):
    X, y, cid = iris
    with pytest.raises(ValueError, match="run_async"):
        FlowerStrategy(FedBuff())
    with pytest.raises(ValueError, match="FlowerStrategy"):
        run_async(_grid(X, y, cid), FedAvg(), initial_arrays(4, 3))
    with pytest.raises(ValueError, match="unknown strategy"):
        FlowerStrategy("fedfoo")
    with pytest.raises(TypeError, match="strategy object"):
        FlowerStrategy(object())
    grid = _grid(X, y, cid)
    bad = ArrayRecord({"weights": Array(np.zeros((5, 3)))})
    with pytest.raises(ValueError, match="model key"):
        FlowerStrategy().configure_train(1, bad, ConfigRecord(), grid)
    # a node without its partition in node_config
    app = make_client_app(X, y, client_id=cid, partition_key="shard")
    fl = FlowerStrategy()
    msgs = fl.configure_train(1, initial_arrays(4, 3), ConfigRecord(), grid)
    with pytest.raises(ValueError, match="shard"):
        InProcessGrid(app, n_nodes=4).push_messages(msgs[:1])
    with pytest.raises(ValueError, match="absent from classes"):
        make_client_app(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="task"):
        make_client_app(X, y, task="ranking")


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None and not _required("ray"),
    reason="Flower's simulation engine needs Ray (pip install 'skalgos[flower]')",
)
def test_flower_run_simulation_smoke(iris, monkeypatch):
    importlib.import_module("ray")  # with SKALGOS_REQUIRE_EXTRAS=ray: fail here
    from flwr.serverapp import ServerApp
    from flwr.simulation import run_simulation

    # CPU-only: keep Ray's accelerator env-var override off (and quiet)
    monkeypatch.setenv("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")

    X, y, _ = iris
    cid = np.arange(150) % 2
    out = {}
    server = ServerApp()

    @server.main()
    def main(grid, context):
        fl = FlowerStrategy(FedAvg(), learning_rate=LR, local_steps=3)
        out["sync"] = fl.start(grid, initial_arrays(4, 3), num_rounds=2)
        out["async"] = run_async(
            grid, FedBuff(buffer_size=2), initial_arrays(4, 3), n_rounds=1, timeout=60
        )

    run_simulation(
        server_app=server,
        client_app=make_client_app(X, y, client_id=cid),
        num_supernodes=2,
        backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0.0}},
    )
    est = FederatedClassifier(
        FedAvg(),
        partition="given",
        n_rounds=2,
        local_steps=3,
        learning_rate=LR,
        batch_size=None,
    ).fit(X, y, client_id=cid)
    np.testing.assert_allclose(
        out["sync"].arrays["W"].numpy(), est._coef_xp, rtol=1e-12, atol=1e-14
    )
    assert list(out["async"].train_metrics_clientapp) == [1]  # 2 arrivals in
    assert np.isfinite(out["async"].arrays["W"].numpy()).all()
