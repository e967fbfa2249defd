"""FlowerStrategy: a synchronous skalgos strategy as a Flower Message-API strategy."""

from logging import INFO, WARNING

import numpy as np
from flwr.app import ConfigRecord, Message, MessageType, RecordDict
from flwr.serverapp.strategy import FedAvg as _FlowerFedAvg
from flwr.serverapp.strategy.strategy_utils import sample_nodes
from flwr.supercore import log
from sklearn.base import clone
from sklearn.utils import check_random_state

from ...utils._backend import device as _device
from .._federated import _Context, _local_steps, _mean_local_steps
from .._strategies import STRATEGIES
from .._strategies import FedAvg as _SkFedAvg
from ._records import (
    LOCAL_KEY,
    MODEL_KEY,
    _array_record,
    _model,
    _xp,
    encode_local,
)


def _resolve(strategy, asynchronous):
    """A validated copy of a strategy object (or name)."""
    if strategy is None:
        strategy = _SkFedAvg()
    elif isinstance(strategy, str):
        if strategy not in STRATEGIES:
            raise ValueError(
                f"unknown strategy {strategy!r}; expected one of {sorted(STRATEGIES)}."
            )
        strategy = STRATEGIES[strategy]()
    if not hasattr(strategy, "_asynchronous"):
        raise TypeError(
            f"strategy must be a skalgos.federated strategy object, got "
            f"{type(strategy).__name__}."
        )
    strategy = clone(strategy)
    strategy._validate_params()
    if strategy._asynchronous != asynchronous:
        kind = "asynchronous" if strategy._asynchronous else "synchronous"
        where = "run_async" if strategy._asynchronous else "FlowerStrategy"
        raise ValueError(
            f"{type(strategy).__name__} is {kind}: run it with "
            f"skalgos.federated.flower.{where}."
        )
    return strategy


def _context(n_clients, learning_rate, batch_size, local_steps, planned_arrivals):
    """The ``ctx`` the server rules see, as built by the simulator."""
    xp = _xp()
    ctx = _Context()
    ctx.xp, ctx.device, ctx.rng = xp, _device(xp.zeros(1)), None
    ctx.learning_rate = learning_rate
    ctx.batch_size = batch_size
    ctx.grad_scale = 1.0
    ctx.n_clients = n_clients
    ctx.p = xp.full((n_clients,), 1.0 / n_clients)
    ctx.mean_steps = _mean_local_steps(local_steps)
    ctx.planned_arrivals = planned_arrivals
    return ctx


def _train_content(W, config, steps, kwargs, row, learning_rate, batch_size, rng):
    """RecordDict of one client's train message."""
    cfg = ConfigRecord(dict(config))
    cfg["learning-rate"] = float(learning_rate)
    cfg["local-steps"] = int(steps)
    cfg["batch-size"] = 0 if batch_size is None else int(batch_size)
    cfg["grad-scale"] = 1.0
    if batch_size is not None:
        cfg["seed"] = int(rng.randint(np.iinfo(np.int32).max))
    local_cfg, local_arrays = encode_local(kwargs, row)
    for k, v in local_cfg.items():
        cfg[k] = v
    record = {"arrays": _array_record(**{MODEL_KEY: W}), "config": cfg}
    if local_arrays is not None:
        record[LOCAL_KEY] = local_arrays
    return RecordDict(record)


def _reply_outputs(xp, replies):
    """Stack train replies into the dict ``local_sgd`` returns."""
    arrays = [m.content["arrays"] for m in replies]
    metrics = [m.content["metrics"] for m in replies]

    def stack(key):
        return xp.asarray(np.stack([a[key].numpy() for a in arrays]))

    out = {"W": stack(MODEL_KEY), "last_dir": stack("last_dir")}
    if all("mean_grad" in a for a in arrays):
        out["mean_grad"] = stack("mean_grad")
    out["n_steps"] = xp.asarray([float(m["n-steps"]) for m in metrics])
    out["tau"] = xp.asarray([float(m["tau"]) for m in metrics])
    sizes = np.asarray([float(m["num-examples"]) for m in metrics])
    return out, sizes


class FlowerStrategy(_FlowerFedAvg):
    """A synchronous skalgos strategy as a Flower (Message API) strategy.

    Each round, :meth:`configure_train` sends every sampled node the server
    model and what the skalgos strategy sends its clients (its
    ``_local_kwargs``: FedProx's proximal weight and anchor, FedECADO's flow
    correction ``I_i / p_i`` and step control, ...) together with the local
    learning rate and step budget; :meth:`aggregate_train` stacks the replies
    of the :func:`make_client_app` nodes and applies the strategy's own
    ``_aggregate``, the function the in-process simulator calls. So
    ``FlowerStrategy(FedECADO())`` and
    ``FederatedClassifier(FedECADO())`` run one implementation of the server
    maths (tested to agree on the same data). Per-client server state
    (FedECADO's flows) lives here, keyed by node.

    Parameters
    ----------
    strategy : strategy object, str or None, default=None
        A synchronous skalgos strategy (:class:`~skalgos.federated.FedAvg`,
        :class:`~skalgos.federated.FedProx`,
        :class:`~skalgos.federated.FedNova`,
        :class:`~skalgos.federated.FedExP`,
        :class:`~skalgos.federated.FedECADO`) or its lower-case name;
        ``None`` is ``FedAvg()``. It is cloned. Asynchronous strategies run
        with :func:`run_async`.
    learning_rate : float, default=0.1
        Local step size (FedECADO: the first step).
    local_steps : int, array-like of shape (n_nodes,) or "uniform", default=10
        Local steps per round: one for all, one per node (in node-id order),
        or drawn from ``U{1..20}`` per node and round.
    batch_size : int or None, default=None
        Local mini-batch size; ``None`` uses full local gradients.
    random_state : int, RandomState instance or None, default=None
        Seeds the ``"uniform"`` step draws and the nodes' mini-batches.
    fraction_train, fraction_evaluate, min_train_nodes, min_evaluate_nodes, \
min_available_nodes, weighted_by_key, arrayrecord_key, configrecord_key, \
train_metrics_aggr_fn, evaluate_metrics_aggr_fn :
        As in :class:`flwr.serverapp.strategy.FedAvg`. The model must be in
        the ArrayRecord under ``"W"`` (see :func:`initial_arrays`);
        ``weighted_by_key`` only weighs the aggregated metrics, the model
        weights are the strategy's (``p_i = n_i / sum_j n_j`` from the
        replies' ``num-examples``).

    Attributes
    ----------
    strategy_ : strategy object
        The validated copy of ``strategy``.
    state_ : dict or None
        Server state of the strategy (``None`` before the first round).
    node_ids_ : list of int or None
        Nodes connected at the first round, in client-index order: the rows
        of per-client state. Nodes that connect later are not sampled.

    Notes
    -----
    The spec sketched one Flower class per algorithm (``FedECADOStrategy``,
    ``FedNovaStrategy``, ...); one wrapper around the strategy objects is the
    same thing with one public name. With ``fraction_train < 1`` the client
    weights ``p_i`` are normalised over the round's participants, which is
    what the simulator does with everyone taking part. The Flower path runs
    on NumPy arrays.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.preprocessing import scale
    >>> from skalgos.federated import FedECADO
    >>> from skalgos.federated.flower import (
    ...     FlowerStrategy, InProcessGrid, estimator_from_arrays, initial_arrays,
    ...     make_client_app)
    >>> X, y = load_iris(return_X_y=True)
    >>> X = scale(X)
    >>> grid = InProcessGrid(make_client_app(X, y, client_id=y), n_nodes=3)
    >>> strategy = FlowerStrategy(FedECADO(), local_steps=5)
    >>> result = strategy.start(grid, initial_arrays(4, 3), num_rounds=10)
    >>> clf = estimator_from_arrays(strategy.model_arrays(result.arrays),
    ...                             classes=[0, 1, 2])
    >>> clf.score(X, y) > 0.8
    True
    """

    def __init__(
        self,
        strategy=None,
        *,
        learning_rate=0.1,
        local_steps=10,
        batch_size=None,
        random_state=None,
        fraction_train=1.0,
        fraction_evaluate=1.0,
        min_train_nodes=2,
        min_evaluate_nodes=2,
        min_available_nodes=2,
        weighted_by_key="num-examples",
        arrayrecord_key="arrays",
        configrecord_key="config",
        train_metrics_aggr_fn=None,
        evaluate_metrics_aggr_fn=None,
    ):
        super().__init__(
            fraction_train=fraction_train,
            fraction_evaluate=fraction_evaluate,
            min_train_nodes=min_train_nodes,
            min_evaluate_nodes=min_evaluate_nodes,
            min_available_nodes=min_available_nodes,
            weighted_by_key=weighted_by_key,
            arrayrecord_key=arrayrecord_key,
            configrecord_key=configrecord_key,
            train_metrics_aggr_fn=train_metrics_aggr_fn,
            evaluate_metrics_aggr_fn=evaluate_metrics_aggr_fn,
        )
        if not learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {learning_rate}.")
        if batch_size is not None and int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1 or None, got {batch_size}.")
        self.strategy = strategy
        self.learning_rate = learning_rate
        self.local_steps = local_steps
        self.batch_size = batch_size
        self.random_state = random_state
        self.strategy_ = _resolve(strategy, asynchronous=False)
        self._rng = check_random_state(random_state)
        self.state_ = None
        self.node_ids_ = None
        self._sizes = {}
        self._sent = None

    def summary(self):
        """Log the configuration (Flower's, then the skalgos strategy)."""
        super().summary()
        log(
            INFO,
            "\t└──> skalgos strategy: %r (learning_rate=%s, local_steps=%s)",
            self.strategy_,
            self.learning_rate,
            self.local_steps,
        )

    # ------------------------------------------------------------------ state
    def _start(self, node_ids, W):
        self.node_ids_ = sorted(node_ids)
        self._index = {n: i for i, n in enumerate(self.node_ids_)}
        n = len(self.node_ids_)
        self._ctx = _context(
            n, self.learning_rate, self.batch_size, self.local_steps, 0
        )
        self.state_ = self.strategy_._init(self._ctx, self._ctx.xp.asarray(W))

    def _weights(self, clients, sizes=None):
        """``p`` over ``clients``: reported sizes, or the known ones (a client
        not heard from yet counts as the mean known size)."""
        if sizes is None:
            known = [self._sizes[i] for i in clients if i in self._sizes]
            fill = float(np.mean(known)) if known else 1.0
            sizes = np.asarray([self._sizes.get(i, fill) for i in clients])
        return self._ctx.xp.asarray(sizes / sizes.sum())

    def model_arrays(self, arrays):
        """The model to predict with for server iterate ``arrays``.

        The server iterate itself for every strategy but FedExP, which
        predicts with the mean of its last two iterates.

        Parameters
        ----------
        arrays : flwr.app.ArrayRecord
            The server iterate (``Result.arrays``).

        Returns
        -------
        arrays : flwr.app.ArrayRecord
        """
        W = _model(arrays)
        if self.state_ is None:
            return _array_record(**{MODEL_KEY: W})
        return _array_record(
            **{MODEL_KEY: self.strategy_._model(self.state_, self._ctx.xp.asarray(W))}
        )

    # --------------------------------------------------------------- training
    def configure_train(self, server_round, arrays, config, grid):
        """One train message per sampled node, with its local arguments."""
        if self.fraction_train == 0.0:
            return []
        num_nodes = int(len(list(grid.get_node_ids())) * self.fraction_train)
        sample_size = max(num_nodes, self.min_train_nodes)
        node_ids, _ = sample_nodes(grid, self.min_available_nodes, sample_size)
        W = _model(arrays)
        if self.state_ is None:
            self._start(grid.get_node_ids(), W)
        unknown = [n for n in node_ids if n not in self._index]
        if unknown:
            log(
                WARNING,
                "configure_train: nodes %s connected after the first round; "
                "they hold no client state and are not sampled.",
                unknown,
            )
        clients = np.asarray(
            sorted(self._index[n] for n in node_ids if n in self._index)
        )
        if clients.size == 0:
            return []
        ctx = self._ctx
        ctx.p = self._weights(clients)
        Wx = ctx.xp.asarray(W)
        kwargs = self.strategy_._local_kwargs(self.state_, ctx, Wx, clients)
        steps = _local_steps(self.local_steps, self._rng, ctx.n_clients)
        config = ConfigRecord(dict(config))
        config["server-round"] = server_round
        messages = []
        for row, i in enumerate(clients.tolist()):
            content = _train_content(
                W,
                config,
                steps[i],
                kwargs,
                row,
                self.learning_rate,
                self.batch_size,
                self._rng,
            )
            messages.append(
                Message(
                    content=content,
                    message_type=MessageType.TRAIN,
                    dst_node_id=self.node_ids_[i],
                )
            )
        self._sent = Wx
        return messages

    def aggregate_train(self, server_round, replies):
        """The strategy's ``_aggregate`` on the stacked replies."""
        valid, _ = self._check_and_log_replies(replies, is_train=True)
        if self._sent is None:  # nothing was sent by this strategy
            return None, None
        valid = [m for m in valid if m.metadata.src_node_id in self._index]
        if not valid:
            return None, None
        valid.sort(key=lambda m: self._index[m.metadata.src_node_id])
        clients = np.asarray([self._index[m.metadata.src_node_id] for m in valid])
        ctx = self._ctx
        out, sizes = _reply_outputs(ctx.xp, valid)
        for i, n in zip(clients.tolist(), sizes.tolist()):
            self._sizes[i] = n
        ctx.p = self._weights(clients, sizes)
        W = self.strategy_._aggregate(self.state_, ctx, self._sent, out, clients)
        metrics = self.train_metrics_aggr_fn(
            [m.content for m in valid], self.weighted_by_key
        )
        return _array_record(**{MODEL_KEY: W}), metrics

    def configure_evaluate(self, server_round, arrays, config, grid):
        """Evaluation messages carrying the model to predict with."""
        return super().configure_evaluate(
            server_round, self.model_arrays(arrays), config, grid
        )
