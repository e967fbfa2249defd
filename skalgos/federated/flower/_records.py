"""What travels in Flower messages, and conversions to and from the simulator.

Server to client (``train``): a ``RecordDict`` with

* ``"arrays"``: ``ArrayRecord`` with the server model under ``"W"``, an array
  of shape ``(d + 1, k)`` (the last row is the intercept), the simulator's
  layout;
* ``"config"``: ``ConfigRecord`` with ``server-round``, ``learning-rate``,
  ``local-steps``, ``batch-size`` (0 for full-batch gradients),
  ``grad-scale``, ``seed`` (mini-batches only) and the strategy's scalar
  local arguments as ``local.<name>`` (FedProx ``local.prox_mu``, MasFL
  ``local.beta`` ...; a nested dict such as FedECADO's step control as
  ``local.ecado.<name>``);
* ``"local"`` (only when the strategy sends arrays): ``ArrayRecord`` with this
  client's rows of the strategy's array arguments (FedProx ``anchor``,
  FedECADO's flow correction ``correction = I_i / p_i``, MasFL's
  ``correction`` and ``momentum``).

Client to server (``train`` reply): ``"arrays"`` with ``W`` (the local end
point), ``last_dir`` and ``mean_grad``; ``"metrics"`` with ``num-examples``,
``n-steps``, ``tau`` (local time, the sum of the step sizes) and
``train-loss``. ``evaluate`` replies carry ``num-examples``, ``loss`` and,
for classification, ``accuracy``.
"""

import numpy as np
from flwr.app import Array, ArrayRecord
from sklearn.utils import check_random_state

from ...utils._backend import get_namespace, to_numpy
from .._federated import FederatedClassifier, FederatedRegressor, _initial_params

MODEL_KEY = "W"
LOCAL_KEY = "local"
_PREFIX = "local."


def _xp():
    """The array namespace the simulator uses for NumPy inputs."""
    return get_namespace(np.zeros(1))


def _array_record(**arrays):
    return ArrayRecord(
        {k: Array(np.ascontiguousarray(to_numpy(v))) for k, v in arrays.items()}
    )


def _model(arrays, key=MODEL_KEY):
    """The server model ``W`` (NumPy) held by ``arrays``."""
    if key not in arrays:
        raise ValueError(
            f"the ArrayRecord holds {sorted(arrays)}, not the model key {key!r}; "
            "build the initial arrays with skalgos.federated.flower.initial_arrays."
        )
    return arrays[key].numpy()


def _is_array(v):
    return hasattr(v, "shape") and len(getattr(v, "shape", ())) > 0


def _scalar(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    return float(v)


def encode_local(kwargs, row):
    """Split local-algorithm arguments into config entries and row ``row`` of
    the array arguments (arrays stacked over clients)."""
    config, arrays = {}, {}
    for name, value in kwargs.items():
        if isinstance(value, dict):
            for sub, v in value.items():
                config[f"{_PREFIX}{name}.{sub}"] = _scalar(v)
        elif _is_array(value):
            arrays[name] = to_numpy(value[row, ...])
        else:
            config[f"{_PREFIX}{name}"] = _scalar(value)
    return config, (_array_record(**arrays) if arrays else None)


def decode_local(config, arrays=None):
    """Inverse of :func:`encode_local` for one client: arrays get a leading
    axis of length 1, as :func:`~skalgos.federated._kernels.local_sgd` wants."""
    kwargs = {}
    for key, value in config.items():
        if not key.startswith(_PREFIX):
            continue
        name = key[len(_PREFIX) :]
        if "." in name:
            name, sub = name.split(".", 1)
            kwargs.setdefault(name, {})[sub] = value
        else:
            kwargs[name] = value
    if arrays is not None:
        for name in arrays:
            kwargs[name] = arrays[name].numpy()[None, ...]
    return kwargs


def initial_arrays(
    n_features, n_outputs, *, model="linear", hidden_units=16, random_state=None
):
    """Starting server model as a Flower ``ArrayRecord``.

    The same start as :class:`~skalgos.federated.FederatedClassifier`: zeros
    for the linear model; for the MLP a Glorot-uniform first layer drawn from
    ``random_state`` and a zero output layer.

    Parameters
    ----------
    n_features : int
        Number of input features.
    n_outputs : int
        Number of classes (classification, also 2) or 1 (regression).
    model : {"linear", "mlp"}, default="linear"
        Linear model or one-hidden-layer tanh MLP (parameters packed in one
        column, as in the simulator).
    hidden_units : int, default=16
        Width of the MLP's hidden layer.
    random_state : int, RandomState instance or None, default=None
        Seeds the MLP's first layer.

    Returns
    -------
    arrays : flwr.app.ArrayRecord
        ``{"W": array of shape (n_features + 1, n_outputs)}`` for the linear
        model.

    Examples
    --------
    >>> from skalgos.federated.flower import initial_arrays
    >>> initial_arrays(4, 3)["W"].numpy().shape
    (5, 3)
    """
    hidden = None if model == "linear" else hidden_units
    rng = check_random_state(random_state)
    return _array_record(W=_initial_params(n_features + 1, n_outputs, hidden, rng))


def estimator_from_arrays(arrays, *, classes=None, model="linear", hidden_units=16):
    """A fitted-equivalent estimator from a Flower ``ArrayRecord``.

    Builds a :class:`~skalgos.federated.FederatedClassifier` (``classes``
    given) or :class:`~skalgos.federated.FederatedRegressor` whose
    ``predict``, ``predict_proba``, ``score``, ``coef_`` and ``intercept_``
    (``coefs_`` / ``intercepts_`` for the MLP) are those of the model in
    ``arrays``. Training attributes (``history_``, ``strategy_state_``,
    client sizes) are not set: the training ran on Flower.

    Parameters
    ----------
    arrays : flwr.app.ArrayRecord
        Holds the server model under ``"W"`` (for example ``Result.arrays`` of
        :meth:`FlowerStrategy.start <flwr.serverapp.strategy.Strategy.start>`
        or of :func:`run_async`).
    classes : array-like or None, default=None
        Class labels in the order of the model's outputs (the sorted labels
        given to :func:`make_client_app`); ``None`` gives a regressor.
    model : {"linear", "mlp"}, default="linear"
        Model the arrays belong to.
    hidden_units : int, default=16
        Width of the MLP's hidden layer.

    Returns
    -------
    estimator : FederatedClassifier or FederatedRegressor

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.federated.flower import estimator_from_arrays, initial_arrays
    >>> clf = estimator_from_arrays(initial_arrays(2, 2), classes=[0, 1])
    >>> clf.predict(np.zeros((3, 2))).shape
    (3,)
    """
    W = _model(arrays)
    hidden = None if model == "linear" else hidden_units
    if classes is not None:
        est = FederatedClassifier(model=model, hidden_units=hidden_units)
        est.classes_ = np.asarray(classes)
        est._classes_numeric = est.classes_.dtype.kind in "iuf"
        k = est.classes_.shape[0]
    else:
        est = FederatedRegressor(model=model, hidden_units=hidden_units)
        k = 1
    if hidden is None:
        d1 = W.shape[0]
        if W.shape != (d1, k):
            raise ValueError(
                f"the model has shape {W.shape}; a linear model with {k} outputs "
                f"needs (n_features + 1, {k})."
            )
    else:
        d1 = (W.shape[0] - (hidden + 1) * k) // hidden
        if d1 < 1 or W.shape != (d1 * hidden + (hidden + 1) * k, 1):
            raise ValueError(
                f"the model has shape {W.shape}, not an MLP with {hidden} hidden "
                f"units and {k} outputs."
            )
    est.n_features_in_ = d1 - 1
    est._n_outputs = k
    est._set_coef(W)
    return est
