"""InProcessGrid: a Flower Grid whose nodes are in-process calls of a ClientApp."""

import heapq
import itertools

from flwr.app import Context, Message, RecordDict
from flwr.serverapp import Grid

_FIRST_NODE_ID = 1001


def _ensure_task_identity(run_id):
    """Flower >= 1.42 stamps new messages with the process's task identity,
    which its runtimes set; outside them nobody does, so set it when unset."""
    try:
        from flwr.supercore.task_identity import TaskIdentity
    except ImportError:  # older Flower: messages need no identity
        return
    for name, value in (("run_id", run_id), ("node_id", 1), ("task_id", 1)):
        try:
            getattr(TaskIdentity, name)
        except RuntimeError:
            setattr(TaskIdentity, name, value)


class InProcessGrid(Grid):
    """A Flower ``Grid`` whose nodes run a ``ClientApp`` in this process.

    No SuperLink, no Ray: :meth:`push_messages` calls the ClientApp of the
    destination node at once and keeps the reply until it is pulled. It runs
    a ServerApp's main function, a Flower strategy's ``start`` or
    :func:`run_async` on one machine, deterministically, which is what tests,
    debugging and small experiments need. Exceptions raised by the ClientApp
    propagate (a real Grid would return an error reply).

    Parameters
    ----------
    client_app : flwr.clientapp.ClientApp
        The app every node runs (for example from :func:`make_client_app`).
    n_nodes : int
        Number of nodes. Node ``j`` has node id ``1001 + j`` and
        ``node_config = {"partition-id": j, "num-partitions": n_nodes}``.
    node_config : dict or None, default=None
        Extra entries of every node's ``node_config``.
    durations : callable or None, default=None
        ``durations(j, message) -> float``: simulated time node ``j`` needs for
        ``message``. Given, the grid keeps a virtual clock and each
        :meth:`pull_messages` returns only the reply that finishes first (one
        event at a time, ties in push order), so an asynchronous loop sees
        arrivals in simulated-time order. ``None`` returns every pending
        reply at each pull.
    run_id : int, default=0
        Run id of the nodes' contexts.

    Attributes
    ----------
    time : float
        Virtual clock (with ``durations``): finish time of the last reply
        pulled.
    node_ids : list of int
        Ids of the nodes, in partition order.

    Notes
    -----
    Flower >= 1.42 stamps every new ``Message`` with the process's task
    identity, which its own runtimes set; the constructor sets it when it is
    unset, so that strategies can build messages in this process.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skalgos.federated import FedAvg
    >>> from skalgos.federated.flower import (
    ...     FlowerStrategy, InProcessGrid, initial_arrays, make_client_app)
    >>> X, y = load_iris(return_X_y=True)
    >>> app = make_client_app(X, y, client_id=np.arange(150) % 3)
    >>> grid = InProcessGrid(app, n_nodes=3)
    >>> strategy = FlowerStrategy(FedAvg(), learning_rate=0.05, local_steps=5)
    >>> result = strategy.start(grid, initial_arrays(4, 3), num_rounds=2)
    >>> result.arrays["W"].numpy().shape
    (5, 3)
    """

    def __init__(
        self, client_app, n_nodes, *, node_config=None, durations=None, run_id=0
    ):
        if int(n_nodes) < 1:
            raise ValueError(f"n_nodes must be >= 1, got {n_nodes}.")
        _ensure_task_identity(run_id)
        self.client_app = client_app
        self.durations = durations
        self.node_ids = [_FIRST_NODE_ID + j for j in range(int(n_nodes))]
        self._index = {nid: j for j, nid in enumerate(self.node_ids)}
        self._contexts = {
            nid: Context(
                run_id=run_id,
                node_id=nid,
                node_config={
                    "partition-id": j,
                    "num-partitions": int(n_nodes),
                    **(node_config or {}),
                },
                state=RecordDict(),
                run_config={},
            )
            for j, nid in enumerate(self.node_ids)
        }
        self._run = None
        self._ids = itertools.count()
        self._pending = []  # heap of (finish, seq, message id, reply)
        self.time = 0.0

    def set_run(self, run):
        """Store the run (not used by the in-process nodes)."""
        self._run = run

    @property
    def run(self):
        """The run set with :meth:`set_run` (``None`` if unset)."""
        return self._run

    def create_message(self, content, message_type, dst_node_id, group_id, ttl=None):
        """A new instruction message (as Flower's ``Message`` constructor)."""
        return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

    def get_node_ids(self):
        """Ids of the nodes."""
        return list(self.node_ids)

    def push_messages(self, messages):
        """Run each message on its node now; return the message ids."""
        ids = []
        for msg in messages:
            node = msg.metadata.dst_node_id
            if node not in self._index:
                raise ValueError(f"no node with id {node} (nodes: {self.node_ids}).")
            seq = next(self._ids)
            mid = f"inprocess-{seq}"
            msg.metadata.__dict__["_message_id"] = mid  # what a SuperLink does
            reply = self.client_app(msg, self._contexts[node])
            finish = self.time
            if self.durations is not None:
                finish += float(self.durations(self._index[node], msg))
            heapq.heappush(self._pending, (finish, seq, mid, reply))
            ids.append(mid)
        return ids

    def pull_messages(self, message_ids):
        """Replies to ``message_ids`` that are ready (the first one only, in
        virtual time, when ``durations`` is set)."""
        wanted = set(message_ids)
        mine = [job for job in self._pending if job[2] in wanted]
        if not mine:
            return []
        if self.durations is not None:
            mine = [min(mine)]
            self.time = mine[0][0]
        taken = {job[2] for job in mine}
        self._pending = [job for job in self._pending if job[2] not in taken]
        heapq.heapify(self._pending)
        return [job[3] for job in sorted(mine)]

    def send_and_receive(self, messages, *, timeout=None):
        """Push ``messages`` and pull until every reply is in."""
        ids = set(self.push_messages(messages))
        replies = []
        while ids:
            got = self.pull_messages(ids)
            replies.extend(got)
            ids.difference_update(m.metadata.reply_to_message_id for m in got)
        return replies
