"""run_async: the asynchronous strategies over a Flower Grid (push / pull)."""

import time
from logging import INFO, WARNING

import numpy as np
from flwr.app import ConfigRecord, Message, MessageType, MetricRecord
from flwr.serverapp.strategy import Result
from flwr.supercore import log
from sklearn.utils import check_random_state

from .._federated import _local_steps
from ._records import MODEL_KEY, _array_record, _model
from ._strategy import _context, _reply_outputs, _resolve, _train_content


def run_async(
    grid,
    strategy,
    initial_arrays,
    *,
    n_rounds=20,
    concurrency=None,
    learning_rate=0.1,
    local_steps=10,
    batch_size=None,
    random_state=None,
    config=None,
    timeout=None,
    poll_interval=0.05,
):
    """Run an asynchronous skalgos strategy on Flower nodes.

    The event loop of the simulator's virtual clock, over a real ``Grid``:
    ``concurrency`` nodes train at once; whenever a reply comes back (pulled
    with ``grid.pull_messages``) the strategy's own ``_arrival`` rule turns
    it into the next server model, with the reply's staleness counted in
    server versions (model updates since the node was dispatched), and a
    node that is idle is sent the current model (``grid.push_messages``)
    with the strategy's ``_dispatch_kwargs`` (MasFL's control variates and
    momentum, ...). Nodes run :func:`make_client_app`'s ClientApp. On an
    :class:`InProcessGrid` with ``durations`` the arrivals come in the
    simulator's order, and the result is the simulator's.

    Parameters
    ----------
    grid : flwr.serverapp.Grid
        The Grid of a ServerApp's main function (or an
        :class:`InProcessGrid`). The nodes connected at the start take part.
    strategy : strategy object or str
        An asynchronous skalgos strategy (:class:`~skalgos.federated.FedAsync`,
        :class:`~skalgos.federated.FedBuff`,
        :class:`~skalgos.federated.MasFL`,
        :class:`~skalgos.federated.AdaMasFL`) or its lower-case name; cloned.
    initial_arrays : flwr.app.ArrayRecord
        Starting model under ``"W"`` (see :func:`initial_arrays`).
    n_rounds : int, default=20
        Rounds of ``n_nodes`` arrivals each, as in the simulator.
    concurrency : int or None, default=None
        Nodes training at once (``None``: ``max(1, n_nodes // 4)``).
    learning_rate : float, default=0.1
        Local step size.
    local_steps : int, array-like of shape (n_nodes,) or "uniform", default=10
        Local steps per job.
    batch_size : int or None, default=None
        Local mini-batch size; ``None`` uses full local gradients.
    random_state : int, RandomState instance or None, default=None
        Seeds the choice of nodes, the ``"uniform"`` step draws and the
        mini-batches.
    config : dict or ConfigRecord or None, default=None
        Extra entries of every train message's config.
    timeout : float or None, default=None
        Wall-clock seconds after which the loop stops waiting for replies
        (``None``: no limit).
    poll_interval : float, default=0.05
        Seconds between pulls when no reply is ready.

    Returns
    -------
    result : flwr.serverapp.strategy.Result
        ``arrays``: the final server model; ``train_metrics_clientapp``: per
        round, ``staleness-mean``, ``staleness-max``, ``server-version`` and
        the ``num-examples``-weighted ``train-loss`` of the round's replies.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.preprocessing import scale
    >>> from skalgos.federated import FedBuff
    >>> from skalgos.federated.flower import (
    ...     InProcessGrid, initial_arrays, make_client_app, run_async)
    >>> X, y = load_iris(return_X_y=True)
    >>> X = scale(X)
    >>> app = make_client_app(X, y, client_id=np.arange(150) % 4)
    >>> grid = InProcessGrid(app, n_nodes=4, durations=lambda j, msg: 1.0 + j)
    >>> result = run_async(grid, FedBuff(buffer_size=2), initial_arrays(4, 3),
    ...                    n_rounds=3, concurrency=2, local_steps=5)
    >>> sorted(result.train_metrics_clientapp)
    [1, 2, 3]
    """
    strat = _resolve(strategy, asynchronous=True)
    if int(n_rounds) < 1:
        raise ValueError(f"n_rounds must be >= 1, got {n_rounds}.")
    rng = check_random_state(random_state)
    nodes = sorted(grid.get_node_ids())
    if not nodes:
        raise ValueError("the grid has no connected node.")
    c = len(nodes)
    conc = min(int(concurrency or max(1, c // 4)), c)
    total = int(n_rounds) * c
    ctx = _context(c, learning_rate, batch_size, local_steps, total)
    xp = ctx.xp
    W = xp.asarray(_model(initial_arrays))
    state = strat._init(ctx, W)
    base = ConfigRecord(dict(config or {}))
    version = 0
    pending = {}  # message id -> (client, version at dispatch, model sent)

    def dispatch(i):
        steps = _local_steps(local_steps, rng, c)[i]
        kwargs = strat._dispatch_kwargs(state, ctx, W, i)
        cfg = ConfigRecord(dict(base))
        cfg["server-round"] = version
        content = _train_content(
            W, cfg, steps, kwargs, 0, learning_rate, batch_size, rng
        )
        msg = Message(
            content=content, message_type=MessageType.TRAIN, dst_node_id=nodes[i]
        )
        (mid,) = list(grid.push_messages([msg]))
        pending[mid] = (i, version, W)

    for i in rng.choice(c, size=conc, replace=False):
        dispatch(int(i))

    result = Result()
    arrivals, stale, losses = 0, [], []
    deadline = None if timeout is None else time.time() + timeout
    while arrivals < total and pending:
        replies = list(grid.pull_messages(list(pending)))
        if not replies:
            if deadline is not None and time.time() > deadline:
                log(WARNING, "run_async: timeout after %d arrivals", arrivals)
                break
            time.sleep(poll_interval)
            continue
        for reply in replies:
            i, sent_version, W_sent = pending.pop(reply.metadata.reply_to_message_id)
            if reply.has_error():
                log(
                    WARNING,
                    "run_async: node %d replied with an error: %s",
                    nodes[i],
                    reply.error.reason,
                )
            else:
                s = version - sent_version
                out, sizes = _reply_outputs(xp, [reply])
                Wn = strat._arrival(state, ctx, W, i, out, W_sent, s)
                if Wn is not None:
                    W = Wn
                    version += 1
                arrivals += 1
                stale.append(s)
                metrics = reply.content["metrics"]
                losses.append((float(metrics["train-loss"]), int(sizes[0])))
                if arrivals % c == 0 or arrivals == total:
                    loss, n = np.asarray(losses).T
                    rec = MetricRecord(
                        {
                            "staleness-mean": float(np.mean(stale)),
                            "staleness-max": int(np.max(stale)),
                            "server-version": version,
                            "train-loss": float(np.sum(loss * n) / np.sum(n)),
                        }
                    )
                    rnd = (arrivals + c - 1) // c
                    result.train_metrics_clientapp[rnd] = rec
                    log(INFO, "run_async: round %d: %s", rnd, rec)
                    stale, losses = [], []
            if arrivals >= total:
                break
            busy = {job[0] for job in pending.values()}
            idle = [j for j in range(c) if j not in busy]
            if idle:
                dispatch(int(rng.choice(idle)))
    result.arrays = _array_record(**{MODEL_KEY: strat._model(state, W)})
    return result
