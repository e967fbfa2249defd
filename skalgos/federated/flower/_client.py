"""The ClientApp: the simulator's local kernel on one node's data."""

import numpy as np
from flwr.app import Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from sklearn.utils.validation import check_array, check_consistent_length

from .._kernels import ClientData, client_accuracy, client_losses, local_sgd
from ._records import LOCAL_KEY, MODEL_KEY, _array_record, _model, _xp, decode_local


def _num_examples(data):
    """The node's total sample weight (its row count for unit weights): the
    size its replies are weighted by, as the simulator's ``p_i``."""
    size = float(data.size[0])
    return int(size) if size.is_integer() else size


class _NodeData:
    """Builds (once per partition) the ``ClientData`` of one node."""

    def __init__(
        self, X, y, client_id, sample_weight, task, classes, alpha, hidden, key
    ):
        self.X = check_array(X, dtype=np.float64)
        self.y = np.asarray(y).ravel()
        check_consistent_length(self.X, self.y)
        self.sw = (
            np.ones(self.X.shape[0])
            if sample_weight is None
            else np.asarray(sample_weight, dtype=np.float64).ravel()
        )
        check_consistent_length(self.X, self.sw)
        self.task, self.alpha, self.hidden, self.key = task, alpha, hidden, key
        if task == "classification":
            self.classes = np.unique(self.y) if classes is None else np.asarray(classes)
            missing = np.setdiff1d(np.unique(self.y), self.classes)
            if missing.size:
                raise ValueError(
                    f"y has labels {missing.tolist()} absent from classes "
                    f"{self.classes.tolist()}."
                )
        if client_id is None:
            self.cid, self.uniq = None, None
        else:
            self.cid = np.asarray(client_id).ravel()
            check_consistent_length(self.X, self.cid)
            self.uniq = np.unique(self.cid)
        self._cache = {}

    def rows(self, context):
        if self.cid is None:
            return None
        if self.key not in context.node_config:
            raise ValueError(
                f"make_client_app was given client_id, so each node needs its "
                f"partition in node_config[{self.key!r}] (0 .. "
                f"{self.uniq.shape[0] - 1}); this node's config has "
                f"{sorted(context.node_config)}."
            )
        part = int(context.node_config[self.key])
        if not 0 <= part < self.uniq.shape[0]:
            raise ValueError(
                f"partition {part} out of range: client_id has "
                f"{self.uniq.shape[0]} clients."
            )
        return np.flatnonzero(self.cid == self.uniq[part])

    def data(self, context):
        rows = self.rows(context)
        key = None if rows is None else int(rows[0])
        if key not in self._cache:
            self._cache[key] = self._build(rows)
        return self._cache[key]

    def _build(self, rows):
        X, y, sw = self.X, self.y, self.sw
        if rows is not None:
            X, y, sw = X[rows], y[rows], sw[rows]
        n = X.shape[0]
        X1 = np.concatenate([X, np.ones((n, 1))], axis=1)
        if self.task == "classification":
            Y = np.eye(self.classes.shape[0])[np.searchsorted(self.classes, y)]
        else:
            Y = y.astype(np.float64).reshape(-1, 1)
        xp = _xp()
        return ClientData(
            xp,
            xp.asarray(X1[None, ...]),
            xp.asarray(Y[None, ...]),
            xp.asarray(sw[None, :]),
            np.array([n]),
            self.task,
            self.alpha,
            self.hidden,
        )


def make_client_app(
    X,
    y,
    client_id=None,
    *,
    classes=None,
    task="classification",
    alpha=1e-4,
    model="linear",
    hidden_units=16,
    sample_weight=None,
    partition_key="partition-id",
):
    """A Flower ``ClientApp`` that trains the simulator's model on one node.

    The ``train`` handler runs the same local kernel as the in-process
    simulator (:class:`~skalgos.federated.FederatedClassifier`) on this node's
    rows, with the learning rate, step budget, mini-batch size and the
    strategy's local arguments (FedProx's proximal term, FedECADO's flow
    correction and step control, MasFL's control variates and momentum) that
    the server put in the message, and replies with the local end point and
    what the server rules need (``n-steps``, ``tau``, ``last_dir``,
    ``mean_grad``, ``num-examples``). The ``evaluate`` handler returns the
    node's loss and accuracy. The message layout is described in the module
    docstring of ``skalgos/federated/flower/_records.py``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training data: this node's rows, or, with ``client_id``, the rows of
        all clients (simulation: every node holds the same arrays and keeps
        its own partition).
    y : array-like of shape (n_samples,)
        Targets.
    client_id : array-like of shape (n_samples,), default=None
        Client of each row. Given, a node trains on the rows of the
        ``node_config[partition_key]``-th client (clients sorted by label);
        ``None`` uses all rows.
    classes : array-like or None, default=None
        Class labels, identical on every node (``None``: the sorted labels of
        ``y``, which is right only when ``y`` holds every class).
    task : {"classification", "regression"}, default="classification"
        Softmax cross-entropy or half squared error.
    alpha : float, default=1e-4
        L2 penalty on the weights (not on the intercept), as in the simulator.
    model : {"linear", "mlp"}, default="linear"
        Linear model or one-hidden-layer tanh MLP.
    hidden_units : int, default=16
        Width of the MLP's hidden layer.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights inside the node's loss.
    partition_key : str, default="partition-id"
        Key of the node's partition in its ``node_config`` (Flower's
        simulation engine sets ``"partition-id"``).

    Returns
    -------
    app : flwr.clientapp.ClientApp

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skalgos.federated.flower import InProcessGrid, make_client_app
    >>> X, y = load_iris(return_X_y=True)
    >>> app = make_client_app(X, y, client_id=y)  # one class per client
    >>> grid = InProcessGrid(app, n_nodes=3)
    >>> len(list(grid.get_node_ids()))
    3
    """
    if task not in ("classification", "regression"):
        raise ValueError(
            f"task must be 'classification' or 'regression', got {task!r}."
        )
    if model not in ("linear", "mlp"):
        raise ValueError(f"model must be 'linear' or 'mlp', got {model!r}.")
    hidden = None if model == "linear" else hidden_units
    node = _NodeData(
        X, y, client_id, sample_weight, task, classes, alpha, hidden, partition_key
    )
    app = ClientApp()

    @app.train()
    def train(msg, context):
        data = node.data(context)
        content = msg.content
        W = _model(content["arrays"])
        cfg = content["config"]
        kwargs = decode_local(cfg, content.get(LOCAL_KEY))
        batch = int(cfg.get("batch-size", 0)) or None
        rng = np.random.RandomState(int(cfg.get("seed", 0)))
        out = local_sgd(
            data,
            data.xp.asarray(W[None, ...]),
            np.array([int(cfg["local-steps"])]),
            float(cfg["learning-rate"]),
            rng,
            batch_size=batch,
            grad_scale=float(cfg.get("grad-scale", 1.0)),
            **kwargs,
        )
        loss = float(client_losses(data, out["W"])[0])
        reply = RecordDict(
            {
                "arrays": _array_record(
                    **{
                        MODEL_KEY: out["W"][0, ...],
                        "last_dir": out["last_dir"][0, ...],
                        "mean_grad": out["mean_grad"][0, ...],
                    }
                ),
                "metrics": MetricRecord(
                    {
                        "num-examples": _num_examples(data),
                        "n-steps": float(out["n_steps"][0]),
                        "tau": float(out["tau"][0]),
                        "train-loss": loss,
                    }
                ),
            }
        )
        return Message(reply, reply_to=msg)

    @app.evaluate()
    def evaluate(msg, context):
        data = node.data(context)
        W = data.xp.asarray(_model(msg.content["arrays"])[None, ...])
        metrics = {
            "num-examples": _num_examples(data),
            "loss": float(client_losses(data, W)[0]),
        }
        if data.task == "classification":
            metrics["accuracy"] = float(client_accuracy(data, W)[0])
        return Message(RecordDict({"metrics": MetricRecord(metrics)}), reply_to=msg)

    return app
