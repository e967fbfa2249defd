"""Epoch-end callbacks for TorchClassifier / TorchRegressor (skorch-style).

A callback is either a plain callable ``cb(estimator, history)`` run at the
end of every epoch, or an object with any of the methods below (the
:class:`Callback` base gives no-op defaults):

``on_train_begin(estimator)``
    Once, before the first epoch of a fresh fit (not on continuations).
``on_epoch_end(estimator, history)``
    After every epoch; ``history`` is ``estimator.history_`` (the last row is
    the epoch that just ended, with ``train_loss``, ``lr``, ``dur`` and, with
    a validation split, ``valid_loss``). Returning ``True`` stops training.
``on_train_end(estimator, history)``
    At the end of every ``fit`` / ``partial_fit`` call, also after a stop.

The estimators deep-copy their ``callbacks`` into ``callbacks_`` at a fresh
fit, so a callback's state (best score, best weights) never leaks between
fits, clones or grid-search candidates.
"""

import copy
import os

import numpy as np
import torch

__all__ = ["Callback", "Checkpoint", "EarlyStopping"]


class Callback:
    """Base class with no-op hooks; override the ones you need.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.torch import TorchRegressor
    >>> from skalgos.torch.callbacks import Callback
    >>> class StopAt(Callback):
    ...     def on_epoch_end(self, estimator, history):
    ...         return history[-1]["epoch"] == 2
    >>> X = np.linspace(-1, 1, 200).reshape(-1, 1)
    >>> reg = TorchRegressor(lr=0.05, batch_size=16, max_epochs=10,
    ...                      callbacks=[StopAt()], random_state=0)
    >>> reg.fit(X, X.ravel()).n_iter_
    2
    """

    def on_train_begin(self, estimator):
        """Called before the first epoch of a fresh fit."""

    def on_epoch_end(self, estimator, history):
        """Called after every epoch; return True to stop training."""

    def on_train_end(self, estimator, history):
        """Called at the end of every fit / partial_fit call."""


class _Monitor(Callback):
    """Tracks the best value of one history key."""

    def __init__(self, monitor, lower_is_better, threshold):
        self.monitor = monitor
        self.lower_is_better = lower_is_better
        self.threshold = threshold

    def on_train_begin(self, estimator):
        if self.monitor.startswith("valid") and not estimator._has_validation():
            raise ValueError(
                f"{type(self).__name__}(monitor={self.monitor!r}) needs a "
                "validation split: set validation_fraction (e.g. 0.1) on "
                f"{type(estimator).__name__}, or monitor='train_loss'."
            )
        self.best_score_ = np.inf if self.lower_is_better else -np.inf
        self.best_epoch_ = None
        self.best_state_dict_ = None

    def _value(self, history):
        row = history[-1]
        if self.monitor not in row:
            raise KeyError(
                f"{type(self).__name__}: history has no {self.monitor!r}; its keys "
                f"are {sorted(row)}."
            )
        return float(row[self.monitor])

    def _improved(self, history, estimator):
        value = self._value(history)
        if self.lower_is_better:
            better = value < self.best_score_ - self.threshold
        else:
            better = value > self.best_score_ + self.threshold
        if better:
            self.best_score_ = value
            self.best_epoch_ = history[-1]["epoch"]
            self.best_state_dict_ = copy.deepcopy(estimator.module_.state_dict())
        return better

    def restore(self, estimator):
        """Load the best weights seen into ``estimator.module_``; True if any."""
        if getattr(self, "best_state_dict_", None) is None:
            return False
        estimator.module_.load_state_dict(self.best_state_dict_)
        return True


class EarlyStopping(_Monitor):
    """Stop when ``monitor`` has not improved for ``patience`` epochs.

    Parameters
    ----------
    monitor : str, default="valid_loss"
        A key of the history rows. ``"valid_loss"`` needs the estimator's
        ``validation_fraction``.
    patience : int, default=5
        Epochs without an improvement of more than ``threshold``.
    threshold : float, default=1e-4
    lower_is_better : bool, default=True
    load_best : bool, default=True
        At the end of training, load the weights of the best epoch.

    Attributes
    ----------
    best_score_, best_epoch_ : float, int
    best_state_dict_ : dict
        A copy of the module's state at the best epoch.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skalgos.torch import TorchClassifier
    >>> from skalgos.torch.callbacks import EarlyStopping
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = TorchClassifier(max_epochs=200, validation_fraction=0.2, n_jobs=1,
    ...                       callbacks=[EarlyStopping(patience=3, threshold=0.01)],
    ...                       random_state=0).fit(X, y)
    >>> clf.n_iter_ < 200
    True
    """

    def __init__(
        self,
        monitor="valid_loss",
        patience=5,
        threshold=1e-4,
        lower_is_better=True,
        load_best=True,
    ):
        super().__init__(monitor, lower_is_better, threshold)
        if int(patience) < 1:
            raise ValueError(f"patience must be >= 1; got {patience!r}.")
        self.patience = int(patience)
        self.load_best = load_best

    def on_train_begin(self, estimator):
        super().on_train_begin(estimator)
        self.misses_ = 0

    def on_epoch_end(self, estimator, history):
        if self._improved(history, estimator):
            self.misses_ = 0
            return False
        self.misses_ += 1
        return self.misses_ >= self.patience

    def on_train_end(self, estimator, history):
        if self.load_best:
            self.restore(estimator)


class Checkpoint(_Monitor):
    """Keep (and optionally save) the module weights of the best epoch.

    Parameters
    ----------
    monitor : str, default="valid_loss"
    f_params : str, path or None, default=None
        If given, the best ``state_dict`` is also written there with
        :func:`torch.save` each time it improves.
    lower_is_better : bool, default=True
    load_best : bool, default=False
        At the end of training, load the best weights into the module.

    Attributes
    ----------
    best_score_, best_epoch_, best_state_dict_
        As in :class:`EarlyStopping`.

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.torch import TorchRegressor
    >>> from skalgos.torch.callbacks import Checkpoint
    >>> X = np.linspace(-1, 1, 40).reshape(-1, 1)
    >>> cp = Checkpoint(monitor="train_loss")
    >>> reg = TorchRegressor(lr=0.05, max_epochs=3, callbacks=[cp], n_jobs=1,
    ...                      random_state=0).fit(X, X.ravel())
    >>> reg.callbacks_[0].best_epoch_ in (1, 2, 3)
    True
    """

    def __init__(
        self,
        monitor="valid_loss",
        f_params=None,
        lower_is_better=True,
        load_best=False,
    ):
        super().__init__(monitor, lower_is_better, 0.0)
        self.f_params = f_params
        self.load_best = load_best

    def on_epoch_end(self, estimator, history):
        if self._improved(history, estimator) and self.f_params is not None:
            torch.save(self.best_state_dict_, os.fspath(self.f_params))
        return False

    def on_train_end(self, estimator, history):
        if self.load_best:
            self.restore(estimator)

    @staticmethod
    def load(estimator, f_params):
        """Load weights saved by a Checkpoint into a fitted estimator.

        The file is read with ``weights_only=True`` and checked against the
        estimator's ``module_`` before anything is loaded: the same keys,
        the same shapes, a floating dtype for every floating parameter or
        buffer (integer weights are refused, not cast), the module's dtype
        for the others (e.g. BatchNorm's ``num_batches_tracked``), and finite
        values (also once cast to the module's dtype). A mismatch raises a
        ``ValueError`` that names the entry, and the module is left as it was.

        Parameters
        ----------
        estimator : TorchClassifier or TorchRegressor
            A fitted estimator (its ``module_`` receives the weights).
        f_params : str or path
            A file written by :class:`Checkpoint` (``f_params``) or by
            ``torch.save(module.state_dict(), path)``.

        Returns
        -------
        estimator : the same estimator, with the loaded weights.
        """
        module = getattr(estimator, "module_", None)
        if module is None:
            raise ValueError(
                f"Checkpoint.load needs a fitted estimator (its module_ receives "
                f"the weights); fit {type(estimator).__name__} first, e.g. with "
                "one partial_fit call."
            )
        try:
            state = torch.load(os.fspath(f_params), weights_only=True)
        except Exception as exc:
            raise ValueError(
                f"Could not read a state_dict from {f_params!r}: {exc}"
            ) from exc
        if not isinstance(state, dict):
            raise ValueError(
                f"{f_params!r} does not hold a state_dict; got {type(state).__name__}."
            )
        _check_state_dict(state, module.state_dict(), f_params, estimator)
        try:
            module.load_state_dict(state)
        except RuntimeError as exc:  # pragma: no cover - checked above
            raise ValueError(
                f"{f_params!r} does not fit the module of "
                f"{type(estimator).__name__}: {exc}"
            ) from exc
        return estimator


def _check_state_dict(state, expected, source, estimator):
    """Refuse a state dict that does not match ``expected`` (see ``load``)."""
    name = type(estimator).__name__
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    if missing or unexpected:
        raise ValueError(
            f"{source!r} does not match the module of {name}: missing keys "
            f"{missing[:5]}{' ...' if len(missing) > 5 else ''}, unexpected keys "
            f"{unexpected[:5]}{' ...' if len(unexpected) > 5 else ''}. It was saved "
            "from another module (another architecture or module__ parameters): "
            "load it into an estimator built like the one that saved it."
        )
    for key, ref in expected.items():
        value = state[key]
        if not isinstance(value, torch.Tensor):
            raise ValueError(
                f"{source!r}: entry {key!r} is a {type(value).__name__}, not a tensor."
            )
        if tuple(value.shape) != tuple(ref.shape):
            raise ValueError(
                f"{source!r}: entry {key!r} has shape {tuple(value.shape)}, but the "
                f"module of {name} has {tuple(ref.shape)}; it was saved from "
                "another architecture (e.g. other hidden sizes or features)."
            )
        if ref.is_floating_point() or ref.is_complex():
            if not (value.is_floating_point() or value.is_complex()):
                raise ValueError(
                    f"{source!r}: entry {key!r} has dtype {value.dtype}, but the "
                    f"module's is {ref.dtype}; integer weights are refused rather "
                    "than cast. Save the state_dict of a trained module."
                )
            cast = value.detach().to(ref.dtype)
            bad = int((~torch.isfinite(cast)).sum())
            if bad:
                raise ValueError(
                    f"{source!r}: entry {key!r} holds {bad} NaN or infinite "
                    f"values (in {ref.dtype}); the checkpoint is corrupt or was "
                    "saved from a diverged fit."
                )
        elif value.dtype != ref.dtype:
            raise ValueError(
                f"{source!r}: entry {key!r} has dtype {value.dtype}, but the "
                f"module's is {ref.dtype}."
            )
