"""Flower adapter: the skalgos federated strategies on Flower's Message API.

Importing this subpackage requires Flower (``flwr>=1.21``); install it with
``pip install 'skalgos[flower]'``. ``import skalgos.federated`` never imports
Flower.

* :class:`FlowerStrategy` wraps a synchronous skalgos strategy (FedAvg,
  FedProx, FedNova, FedExP, FedECADO) as a Flower ``Strategy``; the server
  maths is the strategy object's own, shared with the simulator.
* :func:`make_client_app` builds the matching ``ClientApp`` (the simulator's
  local kernel on one node's data).
* :func:`run_async` is the push/pull event loop that runs FedAsync, FedBuff,
  MasFL and AdaMasFL over a Flower ``Grid``.
* :class:`InProcessGrid` runs a ``ClientApp`` on in-process nodes (no Ray, no
  SuperLink), for tests, debugging and examples.
* :func:`initial_arrays` and :func:`estimator_from_arrays` convert between
  Flower ``ArrayRecord`` objects and the simulator's parameter layout.
"""

try:
    import flwr as _flwr  # noqa: F401
    from flwr.serverapp import strategy as _strategy  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "skalgos.federated.flower needs Flower (flwr>=1.21, with the Message API "
        "strategies of flwr.serverapp.strategy), an optional extra. Install it "
        "with `pip install 'skalgos[flower]'`."
    ) from exc

from ._async import run_async
from ._client import make_client_app
from ._grid import InProcessGrid
from ._records import estimator_from_arrays, initial_arrays
from ._strategy import FlowerStrategy

__all__ = [
    "FlowerStrategy",
    "InProcessGrid",
    "estimator_from_arrays",
    "initial_arrays",
    "make_client_app",
    "run_async",
]
