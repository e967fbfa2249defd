"""scikit-learn estimators that train a torch module: TorchClassifier/Regressor."""

import contextlib
import copy
import inspect
import math
import numbers
import operator
import sys
import time
import warnings
from collections.abc import Sequence

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted
from torch import nn

from ..utils._backend import effective_n_threads
from ..utils.validation import float_dtype, target_mean_scale, validate_data
from .callbacks import EarlyStopping
from .lr_scheduler import WSD, Cosine, _FactorSchedule, extend_horizon
from .optim._registry import (
    build_optimizer,
    default_lr,
    default_module_kwargs,
    optimizer_flags,
)
from .optim._schedulefree import recalibrate_batchnorm

__all__ = ["MLP", "TorchClassifier", "TorchRegressor"]

_PREFIXES = ("module__", "optimizer__", "scheduler__", "criterion__")

# max_epochs="auto": at least _AUTO_MIN_EPOCHS epochs and _AUTO_MIN_STEPS
# optimizer steps, at most _AUTO_MAX_EPOCHS epochs; the training-loss plateau
# rule (tol, n_iter_no_change) ends most fits well before. 20 epochs of batch
# 64 are 40 steps on iris (accuracy 0.82 with AdamW, MLPClassifier 0.97);
# MLPClassifier's 200 epochs at min(200, n) are 200 steps at lr 1e-3.
_AUTO_MIN_EPOCHS = 20
_AUTO_MIN_STEPS = 2000
_AUTO_MAX_EPOCHS = 1000

# early_stopping="auto" (TorchRegressor) holds out a validation split from
# this many samples on (10% of 20 is 2 samples)
_AUTO_EARLY_STOPPING_MIN = 20

_ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU, "silu": nn.SiLU}


class MLP(nn.Module):
    """The default module: a multilayer perceptron.

    Parameters
    ----------
    n_features_in : int
    n_outputs : int
    hidden_sizes : tuple of int, default=(64,)
    activation : {"relu", "tanh", "gelu", "silu"}, default="relu"
    dropout : float, default=0.0
    batch_norm : bool, default=False
        Put a ``BatchNorm1d`` after every hidden linear layer.
    bias : bool, default=True
        Biases in the linear layers (``optimizer="symo"`` builds it with
        ``bias=False``, the only structure SyMO covers).

    Notes
    -----
    Inputs of rank > 2 are flattened to (n_samples, n_features_in) first.
    """

    def __init__(
        self,
        n_features_in,
        n_outputs,
        hidden_sizes=(64,),
        activation="relu",
        dropout=0.0,
        batch_norm=False,
        bias=True,
    ):
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise ValueError(
                f"module__activation must be one of {sorted(_ACTIVATIONS)}; got "
                f"{activation!r}."
            )
        if isinstance(hidden_sizes, numbers.Integral):
            hidden_sizes = (hidden_sizes,)
        layers, d = [], n_features_in
        for h in hidden_sizes:
            layers.append(nn.Linear(d, int(h), bias=bias))
            if batch_norm:
                layers.append(nn.BatchNorm1d(int(h)))
            layers.append(_ACTIVATIONS[activation]())
            if dropout:
                layers.append(nn.Dropout(dropout))
            d = int(h)
        layers.append(nn.Linear(d, n_outputs, bias=bias))
        self.net = nn.Sequential(*layers)

    def forward(self, X):
        return self.net(X.flatten(1) if X.ndim > 2 else X)


def _accepts(func, name):
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False
    return name in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def _seed_from(random_state):
    return int(check_random_state(random_state).randint(0, 2**31 - 1))


@contextlib.contextmanager
def _torch_threads(n_jobs):
    """torch's intra-op thread count set from ``n_jobs`` inside the block."""
    if n_jobs is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(effective_n_threads(n_jobs))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _warn(message):
    """A ConvergenceWarning attributed to the first caller outside skalgos.

    The fit loop sits a varying number of frames below the user's call
    (``fit`` goes through sklearn's ``_fit_context``), so the level is found
    by walking the stack rather than fixed.
    """
    frame, level = sys._getframe(1), 1
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not (name.startswith("skalgos.torch") or name == "sklearn.base"):
            break
        frame, level = frame.f_back, level + 1
    warnings.warn(message, ConvergenceWarning, stacklevel=level + 1)


def _has_batchnorm(module):
    return any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in module.modules())


def _numpy_dtype(dtype):
    """``dtype`` (numpy, torch or a name) as a numpy dtype, or a clear error."""
    if isinstance(dtype, torch.dtype):
        return torch.empty(0, dtype=dtype).numpy().dtype
    try:
        out = np.dtype(dtype)
    except TypeError:
        out = None
    if out is None or out.kind not in "biuf":
        raise ValueError(
            "dtype must be None (float32 for float X, int64 for integer X), or a "
            "numeric numpy / torch dtype such as 'float32', 'float64' or 'int64'; "
            f"got {dtype!r}."
        )
    return out


def _resolve_device(device):
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(
            f"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or a torch.device; "
            f"got {device!r}."
        ) from exc


_HISTORY_KEYS = ("epoch", "train_loss", "lr", "valid_loss", "dur")
_HISTORY_CHUNK = 1000  # epochs allocated at once (the window when smaller)


class _History(Sequence):
    """``history_``: the rows of the last ``maxlen`` epochs, in a ring buffer.

    The rows' numbers live in one preallocated float array (one column per
    key and a flag for rows with a ``valid_loss``), allocated ``min(maxlen, 1000)`` epochs at the
    first row and grown geometrically up to ``maxlen`` (``None``: no
    limit), so a stream of ``partial_fit`` epochs adds nothing once the
    window is full. A row is a new dict built on access. ``n`` counts every
    row appended.
    """

    def __init__(self, maxlen):
        self.maxlen = maxlen
        self.n = 0
        # one column per key, plus whether the row has a valid_loss
        self._data = np.empty((0, len(_HISTORY_KEYS) + 1))

    def append(self, row):
        unknown = set(row) - set(_HISTORY_KEYS)
        if unknown:  # pragma: no cover - the epoch loop writes these keys only
            raise ValueError(f"history rows have no keys {sorted(unknown)}.")
        cap = self._data.shape[0]
        limit = math.inf if self.maxlen is None else self.maxlen
        if self.n >= cap and cap < limit:
            data = self._ordered()
            new = int(min(limit, max(2 * cap, _HISTORY_CHUNK)))
            self._data = np.full((new, len(_HISTORY_KEYS) + 1), np.nan)
            self._data[: len(data)] = data
            cap = new
        values = [row.get(k, np.nan) for k in _HISTORY_KEYS]
        self._data[self.n % cap] = values + [float("valid_loss" in row)]
        self.n += 1

    def _ordered(self):
        cap = self._data.shape[0]
        if self.n <= cap:
            return self._data[: self.n]
        i = self.n % cap
        return np.concatenate([self._data[i:], self._data[:i]])

    def __len__(self):
        return min(self.n, self._data.shape[0])

    def column(self, key):
        """The values of ``key`` over the kept epochs (oldest first), an array."""
        return self._ordered()[:, _HISTORY_KEYS.index(key)].copy()

    @staticmethod
    def _row(values):
        values = values.tolist()
        row = {}
        for k, v in zip(_HISTORY_KEYS, values):
            if k == "epoch":
                row[k] = int(v)
            elif k != "valid_loss" or values[-1]:
                row[k] = v
        return row

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._row(v) for v in self._ordered()[i]]
        k = len(self)
        i = operator.index(i)
        if i < 0:
            i += k
        if not 0 <= i < k:
            raise IndexError("history_ index out of range")
        return self._row(self._data[(self.n - k + i) % self._data.shape[0]])

    def __eq__(self, other):
        if isinstance(other, (_History, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return f"{type(self).__name__}({list(self)!r})"


class _BaseTorchEstimator(BaseEstimator):
    """Shared fit loop of TorchClassifier and TorchRegressor."""

    _parameter_constraints = {
        "module": [None, type, callable, nn.Module],
        "criterion": [None, str, type, callable],
        "optimizer": [str, type, callable],
        "lr": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "scheduler": [None, StrOptions({"wsd", "cosine", "constant"}), type, callable],
        "max_epochs": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 1, None, closed="left"),
        ],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "early_stopping": ["boolean"],
        "validation_fraction": [None, Interval(numbers.Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [None, Interval(numbers.Real, 0, None, closed="left")],
        "gradient_clip": [None, Interval(numbers.Real, 0, None, closed="neither")],
        "callbacks": [None, list, tuple],
        "bn_recalibration_batches": [
            Interval(numbers.Integral, 0, None, closed="left")
        ],
        "dtype": [None, str, type, np.dtype, torch.dtype],
        "device": [str, torch.device],
        "n_jobs": [None, numbers.Integral],
        "warm_start": ["boolean"],
        "max_history": [None, Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        module=None,
        *,
        criterion=None,
        optimizer="adamw",
        lr="auto",
        scheduler=None,
        max_epochs="auto",
        batch_size=64,
        shuffle=True,
        early_stopping=False,
        validation_fraction=None,
        n_iter_no_change=10,
        tol=1e-4,
        gradient_clip=None,
        callbacks=None,
        bn_recalibration_batches=50,
        dtype=None,
        device="cpu",
        n_jobs=None,
        warm_start=False,
        max_history=10_000,
        random_state=None,
        verbose=0,
        **kwargs,
    ):
        self.module = module
        self.criterion = criterion
        self.optimizer = optimizer
        self.lr = lr
        self.scheduler = scheduler
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.gradient_clip = gradient_clip
        self.callbacks = callbacks
        self.bn_recalibration_batches = bn_recalibration_batches
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.warm_start = warm_start
        self.max_history = max_history
        self.random_state = random_state
        self.verbose = verbose
        for key, value in kwargs.items():
            setattr(self, key, value)

    # -- skorch-style nested parameters ----------------------------------
    def _nested_keys(self):
        return sorted(k for k in vars(self) if k.startswith(_PREFIXES))

    def get_params(self, deep=True):
        params = super().get_params(deep=deep)
        for key in self._nested_keys():
            params[key] = getattr(self, key)
        return params

    def set_params(self, **params):
        # Nested keys, and keys the constructor stored through **kwargs, are
        # set as attributes; anything else goes through sklearn, which raises
        # ValueError for an unknown key.
        names = set(self._get_param_names())
        nested = {
            k: v
            for k, v in params.items()
            if k.startswith(_PREFIXES) or (k not in names and k in vars(self))
        }
        for key, value in nested.items():
            setattr(self, key, value)
        rest = {k: v for k, v in params.items() if k not in nested}
        if rest:
            super().set_params(**rest)
        return self

    def _prefixed(self, prefix):
        return {
            k[len(prefix) :]: getattr(self, k)
            for k in self._nested_keys()
            if k.startswith(prefix)
        }

    def _check_extra_attributes(self):
        names = set(self._get_param_names())
        bad = [
            k
            for k in vars(self)
            if not k.endswith("_")
            and not k.startswith("_")
            and k not in names
            and not k.startswith(_PREFIXES)
        ]
        if bad:
            raise TypeError(
                f"{type(self).__name__} got unknown parameters {sorted(bad)}. Nested "
                f"parameters need one of the prefixes {list(_PREFIXES)}, e.g. "
                "module__hidden_sizes=(128,) or optimizer__weight_decay=0.01."
            )

    # -- inputs ------------------------------------------------------------
    def _validate_X(self, X, y="no_validation", *, reset, **kwargs):
        """Validated X (any rank >= 2, numeric) and y; records the input dtype."""
        if self.dtype is not None:
            _numpy_dtype(self.dtype)  # a clear error before any conversion
        out = validate_data(
            self,
            X,
            y,
            reset=reset,
            dtype="numeric",
            allow_nd=True,
            # sparse X (a OneHotEncoder's default output) is made dense: the
            # module takes dense batches, and MLP* accept sparse X
            densify=True,
            **kwargs,
        )
        X = out if isinstance(y, str) and y == "no_validation" else out[0]
        if reset:
            self._input_shape = X.shape[1:]
            if self.dtype is not None:
                self._x_dtype = _numpy_dtype(self.dtype)
            elif X.dtype.kind in "iub" and self.module is not None:
                # integer X (token ids) reaches a user module as int64
                self._x_dtype = np.dtype(np.int64)
            else:
                self._x_dtype = np.dtype(np.float32)
        elif X.shape[1:] != self._input_shape:
            raise ValueError(
                f"X has sample shape {X.shape[1:]}, but {type(self).__name__} was "
                f"fitted on samples of shape {self._input_shape}."
            )
        if self._x_dtype.kind == "f" and X.dtype.kind == "f" and X.size:
            # a float32 module overflows well before float32's max: refuse
            # inputs whose squares overflow the working dtype
            limit = float(np.sqrt(np.finfo(self._x_dtype).max)) / 1e3
            big = float(np.max(np.abs(X)))
            if big > limit:
                raise ValueError(
                    f"X has values of magnitude {big:.3g} that overflow "
                    f"{self._x_dtype} (the working dtype) in training; scale "
                    "your features, e.g. with sklearn.preprocessing."
                    "StandardScaler."
                )
        return out

    def _to_tensor_X(self, X):
        dtype = self._x_dtype
        if dtype.kind in "iu" and X.dtype.kind == "f":
            if not np.array_equal(X, np.round(X)):
                raise ValueError(
                    f"{type(self).__name__} was fitted on integer X (dtype "
                    f"{dtype}); got non-integer values. Pass integer arrays, or "
                    "refit with dtype='float32'."
                )
        arr = np.asarray(X, dtype=dtype)
        if not arr.flags.writeable:
            # a read-only array (a memmap, a joblib-shared input): torch
            # cannot share it; copy (the estimator never writes to X)
            arr = arr.copy()
        return torch.as_tensor(arr, device=self.device_)

    def _float_dtype(self):
        """The torch float dtype of the module (and of regression targets)."""
        if self.dtype is not None and _numpy_dtype(self.dtype).kind == "f":
            return getattr(torch, _numpy_dtype(self.dtype).name)
        return torch.float32

    def _epoch_budget(self, n_batches):
        """``max_epochs`` resolved: "auto" ties it to the number of batches."""
        if self.max_epochs != "auto":
            return int(self.max_epochs)
        steps = -(-_AUTO_MIN_STEPS // n_batches)
        return int(min(max(_AUTO_MIN_EPOCHS, steps), _AUTO_MAX_EPOCHS))

    def _early_stopping_on(self):
        """``early_stopping`` resolved ("auto" is decided at the first fit)."""
        if isinstance(self.early_stopping, str):
            return getattr(self, "_early_stopping_auto", False)
        return bool(self.early_stopping)

    def _validation_fraction(self):
        if self.validation_fraction is None and self._early_stopping_on():
            return 0.1
        return self.validation_fraction

    def _has_validation(self):
        return self._validation_fraction() is not None

    # -- building blocks ---------------------------------------------------
    def _build_module(self, n_features, n_outputs):
        kw = self._prefixed("module__")
        module = self.module
        if module is None:
            kw = {**default_module_kwargs(self.optimizer), **kw}
            return MLP(int(np.prod(self._input_shape)), n_outputs, **kw)
        if isinstance(module, nn.Module):
            if kw:
                raise ValueError(
                    "module__* parameters cannot be applied to a module instance; "
                    "pass the module class or a factory instead."
                )
            return copy.deepcopy(module)
        if callable(module):
            if _accepts(module, "n_features_in"):
                kw.setdefault("n_features_in", n_features)
            if _accepts(module, "n_outputs"):
                kw.setdefault("n_outputs", n_outputs)
            if _accepts(module, "input_shape") and not _accepts(module, "kwargs"):
                kw.setdefault("input_shape", tuple(self._input_shape))
            built = module(**kw)
            if not isinstance(built, nn.Module):
                raise TypeError(
                    f"module must build a torch.nn.Module; {module!r} returned "
                    f"{type(built).__name__}."
                )
            return built
        raise TypeError(
            "module must be None, an nn.Module class, a factory or an nn.Module "
            f"instance; got {module!r}."
        )

    def _build_criterion(self):
        kw = self._prefixed("criterion__")
        crit = self.criterion if self.criterion is not None else self._default_criterion
        if isinstance(crit, str):
            table = {
                "cross_entropy": nn.CrossEntropyLoss,
                "mse": nn.MSELoss,
                "l1": nn.L1Loss,
                "huber": nn.HuberLoss,
            }
            if crit not in table:
                raise ValueError(
                    f"criterion must be one of {sorted(table)}, a loss class or a "
                    f"callable; got {crit!r}."
                )
            return table[crit](**kw)
        if isinstance(crit, type):
            return crit(**kw)
        if kw:
            raise ValueError("criterion__* parameters need a criterion class or name.")
        return crit

    def _build_scheduler(self, optimizer, total_steps):
        # "wsd" and "cosine" span the steps of this call plus one, so that
        # the last step taken has a positive rate (the rate of the step not
        # taken is final_lr_factor * lr, which the optimizer reads after fit).
        kw = self._prefixed("scheduler__")
        sched = self.scheduler
        if sched is None:
            if kw:
                raise ValueError("scheduler__* parameters given but scheduler=None.")
            return None
        if sched == "wsd":
            return WSD(optimizer, total_steps=total_steps + 1, **kw)
        if sched == "cosine":
            return Cosine(optimizer, total_steps=total_steps + 1, **kw)
        if sched == "constant":
            return torch.optim.lr_scheduler.ConstantLR(optimizer, factor=1.0, **kw)
        if _accepts(sched, "total_steps"):
            kw.setdefault("total_steps", total_steps)
        return sched(optimizer, **kw)

    def _extend_schedule(self, new_steps):
        """Re-plan "wsd" / "cosine" for a continuation of ``new_steps`` steps."""
        sched = self.scheduler_
        if not isinstance(sched, _FactorSchedule) or new_steps < 1:
            return  # constant, custom schedulers: stepped on as they are
        T0, T1 = self.t_, self.t_ + new_steps
        if type(sched) is WSD and T0 >= 2:
            plan = extend_horizon(
                1.0,
                T0,
                T1,
                cooldown_fraction=sched.cooldown_fraction,
                decay=sched.decay,
            )
            sched.extend(
                T1 + 1,
                lr_scale=plan["base_lr"],
                cooldown_fraction=plan["cooldown_fraction"],
            )
        else:
            sched.extend(T1 + 1)

    # -- the fit loop ------------------------------------------------------
    def _initialize(self, n_features, n_outputs, n_train_batches, epochs):
        self._check_extra_attributes()
        self.lr_ = (
            default_lr(self.optimizer, task=self._lr_task)
            if self.lr == "auto"
            else float(self.lr)
        )
        self.module_ = self._build_module(n_features, n_outputs)
        self.module_ = self.module_.to(device=self.device_, dtype=self._float_dtype())
        self.criterion_ = self._build_criterion()
        self.optimizer_ = build_optimizer(
            self.optimizer, self.module_, self.lr_, **self._prefixed("optimizer__")
        )
        self.scheduler_ = self._build_scheduler(
            self.optimizer_, epochs * n_train_batches
        )
        callbacks = list(self.callbacks or [])
        for cb in callbacks:
            if not (callable(cb) or hasattr(cb, "on_epoch_end")):
                raise TypeError(
                    "callbacks must be callables cb(estimator, history) or objects "
                    f"with on_epoch_end(estimator, history); got {cb!r}."
                )
        if self._early_stopping_on():
            callbacks.insert(
                0,
                EarlyStopping(
                    patience=self.n_iter_no_change,
                    threshold=0.0 if self.tol is None else self.tol,
                    load_best=True,
                ),
            )
        self.callbacks_ = copy.deepcopy(callbacks)
        self.history_ = _History(self.max_history)
        self.n_iter_ = 0
        self.t_ = 0
        for cb in self.callbacks_:
            if hasattr(cb, "on_train_begin"):
                cb.on_train_begin(self)

    def _per_sample_criterion(self):
        """The criterion with ``reduction="none"`` (for sample weights)."""
        crit = self.criterion_
        if getattr(crit, "reduction", None) is not None:
            unreduced = copy.copy(crit)
            unreduced.reduction = "none"
            return unreduced
        if callable(crit) and _accepts(crit, "reduction"):
            return lambda out, target: crit(out, target, reduction="none")
        raise ValueError(
            f"sample_weight needs per-sample losses, but criterion={self.criterion!r} "
            "has no 'reduction' attribute or argument. Pass a torch loss class or "
            "name (they accept reduction='none'), or a callable taking "
            "reduction='none' and returning one loss per sample."
        )

    def _loss(self, out, yb, wb):
        """Batch loss; with weights, sum(w_i l_i) / (batch size * mean weight).

        The normaliser is the mean weight of the whole training set, not of
        the batch: a full batch gives sum(w l) / sum(w), the loss of the
        data with row i repeated w_i times, and minibatches estimate it
        without bias.
        """
        if wb is None:
            return self.criterion_(out, yb)
        per = self._criterion_none(out, yb)
        if per.ndim > 1:
            per = per.reshape(per.shape[0], -1).mean(dim=1)
        return (per * wb).sum() / (per.shape[0] * self._weight_mean)

    def _closure(self, xb, yb, record, wb=None):
        def closure():
            self.optimizer_.zero_grad()
            loss = self._loss(self.module_(xb), yb, wb)
            loss.backward()
            if self.gradient_clip is not None:
                nn.utils.clip_grad_norm_(self.module_.parameters(), self.gradient_clip)
            record.append(float(loss.detach()))
            return loss

        return closure

    def _train_step(self, xb, yb, wb=None):
        """One optimizer step; always goes through a closure."""
        requires_closure, _, accepts_closure = self._flags
        record = []
        closure = self._closure(xb, yb, record, wb)
        try:
            if requires_closure or accepts_closure:
                out = self.optimizer_.step(closure)
                if not record:  # an optimizer that accepted but ignored it
                    raise RuntimeError(
                        f"{type(self.optimizer_).__name__}.step(closure) never "
                        "called the closure; set requires_closure=False on it and "
                        "make step() closure-free, or call the closure in step()."
                    )
            else:
                closure()
                out = self.optimizer_.step()
        except RuntimeError as exc:
            if self.t_ == 0 and not xb.is_floating_point():
                raise RuntimeError(
                    f"{type(self).__name__}: the module failed on integer input "
                    f"(X is passed as {xb.dtype}, for Embedding layers): {exc}. "
                    "Pass dtype='float32' to give the module float input."
                ) from exc
            raise
        loss = record[0] if out is None else float(torch.as_tensor(out).detach())
        if self.scheduler_ is not None:
            self.scheduler_.step()
        self.t_ += 1
        return loss

    def _set_train(self):
        self.module_.train()
        if self._flags[1]:
            self.optimizer_.train()

    def _set_eval(self, X_train=None, gen=None):
        if self._flags[1]:
            self.optimizer_.eval()
            if X_train is not None and _has_batchnorm(self.module_):
                self._recalibrate_batchnorm(X_train, gen)
        self.module_.eval()

    def _recalibrate_batchnorm(self, X, gen):
        """BatchNorm statistics at the evaluation weights (schedule-free)."""
        if self.bn_recalibration_batches == 0:
            return
        n = X.shape[0]
        order = torch.randperm(n, generator=gen) if gen is not None else torch.arange(n)
        batches = (
            X[order[start : start + self.batch_size]]
            for start in range(0, n, self.batch_size)
        )
        recalibrate_batchnorm(self.module_, batches, self.bn_recalibration_batches)

    @torch.no_grad()
    def _mean_loss(self, X, y, w=None):
        total = 0.0
        for start in range(0, X.shape[0], 1024):
            sl = slice(start, start + 1024)
            out = self.module_(X[sl])
            if w is None:
                total += float(self.criterion_(out, y[sl])) * len(out)
            else:
                per = self._criterion_none(out, y[sl])
                per = per.reshape(per.shape[0], -1).mean(dim=1)
                total += float((per * w[sl]).sum()) / float(w.mean())
        return total / X.shape[0]

    def _sample_weight(self, sample_weight, X):
        """Validated weights as a float tensor on the device, or None."""
        if sample_weight is None:
            return None
        w = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
        if not w.sum() > 0:
            raise ValueError(
                "sample_weight sums to zero: at least one sample needs a positive "
                "weight."
            )
        return torch.as_tensor(w, dtype=self._float_dtype(), device=self.device_)

    def _run(self, X, y, *, epochs, first, sample_weight=None):
        """Train for ``epochs`` epochs (X, y already tensors on the device).

        ``epochs=None`` is the fit budget (``max_epochs`` resolved).
        """
        with _torch_threads(self.n_jobs):
            return self._run_epochs(
                X, y, epochs=epochs, first=first, sample_weight=sample_weight
            )

    def _diverged(self, loss, epoch):
        """Non-finite loss: restore the best weights and warn, or raise."""
        name = type(self).__name__
        lr = self.optimizer_.param_groups[0]["lr"]
        for cb in self.callbacks_:
            if getattr(cb, "load_best", False) and hasattr(cb, "restore"):
                if cb.restore(self):
                    _warn(
                        f"{name}: the training loss became {loss} at epoch {epoch} "
                        f"(step {self.t_}); stopped and restored the weights of "
                        f"epoch {cb.best_epoch_} (best {cb.monitor}). Training with "
                        f"a smaller lr (lr_={self.lr_:g}) may get further."
                    )
                    return
        raise FloatingPointError(
            f"{name}: the training loss became {loss} at epoch {epoch} (step "
            f"{self.t_}, lr {lr:g}): the optimizer {self.optimizer!r} diverged. Try a "
            f"smaller lr (e.g. lr={self.lr_ / 10:g}), gradient_clip, or "
            "early_stopping=True to keep the best weights."
        )

    def _run_epochs(self, X, y, *, epochs, first, sample_weight=None):
        seed = _seed_from(self.random_state) if first else None
        with torch.random.fork_rng(devices=[]):
            if seed is not None:
                torch.manual_seed(seed)
                self._seed = seed
            else:
                torch.manual_seed(self._seed + self.t_)
            if first:
                self._early_stopping_auto = X.shape[0] >= _AUTO_EARLY_STOPPING_MIN
            X_val = y_val = None
            if self._has_validation():
                idx = np.arange(X.shape[0])
                strat = y.cpu().numpy() if self._stratify else None
                try:
                    tr, va = train_test_split(
                        idx,
                        test_size=self._validation_fraction(),
                        random_state=self._seed,
                        stratify=strat,
                    )
                except ValueError:  # a class too small to stratify
                    tr, va = train_test_split(
                        idx,
                        test_size=self._validation_fraction(),
                        random_state=self._seed,
                    )
                X_val, y_val = X[va], y[va]
                X, y = X[tr], y[tr]
                if sample_weight is not None:
                    w_val, sample_weight = sample_weight[va], sample_weight[tr]
            w = sample_weight
            n = X.shape[0]
            n_batches = -(-n // self.batch_size)
            if epochs is None:
                epochs = self.max_epochs_ = self._epoch_budget(n_batches)
            if first:
                self._initialize(
                    self.n_features_in_, self._n_outputs, n_batches, epochs
                )
                self._flags = optimizer_flags(self.optimizer_)
            else:
                self._extend_schedule(epochs * n_batches)
            n_iter_before = self.n_iter_
            if w is not None:
                self._criterion_none = self._per_sample_criterion()
                self._weight_mean = float(w.mean())
                if not self._weight_mean > 0:
                    raise ValueError(
                        "sample_weight is zero on every training sample (after "
                        "the validation split); give some of them positive weight."
                    )
            # MLP's rule: stop after n_iter_no_change epochs whose training
            # loss is not below the best by tol (tol=None: never)
            plateau = (
                self.tol is not None and not self._early_stopping_on() and epochs > 1
            )
            best_loss, no_improvement = math.inf, 0
            gen = torch.Generator().manual_seed(self._seed + self.t_)
            name = type(self).__name__
            for _ in range(epochs):
                tic = time.perf_counter()
                self._set_train()
                lr = float(self.optimizer_.param_groups[0]["lr"])
                order = (
                    torch.randperm(n, generator=gen)
                    if self.shuffle
                    else torch.arange(n)
                )
                losses, sizes = [], []
                bad = None
                for start in range(0, n, self.batch_size):
                    idx = order[start : start + self.batch_size]
                    loss = self._train_step(
                        X[idx], y[idx], None if w is None else w[idx]
                    )
                    if not math.isfinite(loss):
                        bad = loss
                        break
                    losses.append(loss)
                    sizes.append(len(idx) if w is None else float(w[idx].sum()))
                self._set_eval(X, gen)
                self.n_iter_ += 1
                if bad is not None:
                    self._diverged(bad, self.n_iter_)
                    break
                row = {
                    "epoch": self.n_iter_,
                    "train_loss": float(np.average(losses, weights=sizes)),
                    "lr": lr,
                }
                if X_val is not None:
                    row["valid_loss"] = self._mean_loss(
                        X_val, y_val, None if w is None else w_val
                    )
                row["dur"] = time.perf_counter() - tic
                self.history_.append(row)
                if self.verbose:
                    msg = " ".join(
                        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in row.items()
                    )
                    print(f"[{name}] {msg}", file=sys.stdout, flush=True)
                stop = False
                for cb in self.callbacks_:
                    hook = getattr(cb, "on_epoch_end", cb)
                    stop = (hook(self, self.history_) is True) or stop
                if plateau:
                    loss = row["train_loss"]
                    no_improvement = (
                        no_improvement + 1 if loss > best_loss - self.tol else 0
                    )
                    best_loss = min(best_loss, loss)
                    stop = stop or no_improvement >= self.n_iter_no_change
                if stop:
                    break
            for cb in self.callbacks_:
                if hasattr(cb, "on_train_end"):
                    cb.on_train_end(self, self.history_)
            self._warn_if_loss_grew(self.n_iter_ - n_iter_before)
            if epochs > 1:
                self._warn_if_no_better_than_baseline(y, w)
        return self

    def _warn_if_no_better_than_baseline(self, y, w=None):
        """Warn when training ended no better than the trivial predictor.

        Only for the default criterion, whose value the trivial predictor's
        loss (:meth:`_trivial_loss`) is comparable with.
        """
        if self.criterion not in (None, self._default_criterion):
            return
        if not self.history_ or self._prefixed("criterion__"):
            return
        baseline, what, advice = self._trivial_loss(y, w)
        last = self.history_[-1]["train_loss"]
        if baseline > 0 and last >= baseline:
            _warn(
                f"{type(self).__name__}: the final training loss {last:.4g} is no "
                f"better than {what} ({baseline:.4g}). {advice}, or tune lr "
                f"(lr_={self.lr_:g}) or max_epochs."
            )

    def _warn_if_loss_grew(self, n_epochs):
        # only the epochs of this call, which trained on the same data: the
        # losses of earlier partial_fit calls were on other batches (on a
        # stream of small batches they differ by orders of magnitude, and a
        # warning per call, each with its own text, filled the warnings
        # registry: ~700 B per call)
        if n_epochs < 2:
            return
        losses = self.history_.column("train_loss")[-n_epochs:]
        if losses[-1] > 100 * min(losses) + 1e-12:
            epochs = self.history_.column("epoch")[-n_epochs:]
            best = int(epochs[np.argmin(losses)])
            _warn(
                f"{type(self).__name__}: the training loss grew from "
                f"{min(losses):.4g} (epoch {best}) to {losses[-1]:.4g} (epoch "
                f"{int(epochs[-1])}); the optimizer {self.optimizer!r} is likely "
                f"diverging. Try a smaller lr (lr_={self.lr_:g})."
            )

    @torch.no_grad()
    def _forward(self, X):
        check_is_fitted(self, "module_")
        X = self._validate_X(X, reset=False)
        Xt = self._to_tensor_X(X)
        self.module_.eval()
        # Predict in float64: float32 matmuls round differently with the
        # batch shape, so outputs would depend on which rows are predicted
        # together. Modules that cannot run in float64 fall back to their
        # own dtype.
        state = {
            k: v.double() if v.is_floating_point() else v
            for k, v in self.module_.state_dict(keep_vars=False).items()
        }
        X64 = Xt.double() if Xt.is_floating_point() else Xt
        with _torch_threads(self.n_jobs):
            try:
                out = torch.func.functional_call(self.module_, state, (X64,))
            except RuntimeError:
                out = self.module_(Xt)
        return out.detach().cpu().numpy().astype(np.float64)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        tags.input_tags.sparse = True  # made dense by validate_data(densify=True)
        return tags


class TorchClassifier(ClassifierMixin, _BaseTorchEstimator):
    """Classifier that trains a torch module, with any registered optimizer.

    A drop-in for :class:`~sklearn.neural_network.MLPClassifier` when
    ``module=None`` (a :class:`MLP` with ``module__hidden_sizes=(64,)``), or
    a wrapper for your own module. The optimizer is a name from
    :func:`skalgos.torch.optim.available_optimizers` (``"sgd"``,
    ``"adamw"``, ``"muon"``, ``"sgd_sf"``, ``"adamw_sf"``, ...) or a class,
    so ``GridSearchCV`` can tune it like any hyperparameter.

    Parameters
    ----------
    module : None, nn.Module class, factory or nn.Module, default=None
        ``None`` builds :class:`MLP`. A class or factory is called with the
        ``module__*`` parameters, plus ``n_features_in`` and ``n_outputs``
        when its signature accepts them; it must return logits of shape
        (n_samples, n_classes). An instance is deep-copied at each ``fit``.
    criterion : None, str, loss class or callable, default=None
        ``None`` is ``"cross_entropy"`` on the logits.
    optimizer : str, torch.optim.Optimizer subclass or factory, default="adamw"
        A registered name, a class (built as ``cls(params, lr=lr,
        **optimizer__*)``) or ``factory(module, lr, **optimizer__*)``.
    lr : "auto" or float > 0, default="auto"
        Learning rate, in the optimizer's own units (Muon's is spectral).
        ``"auto"`` is the registered default of the optimizer name,
        :func:`skalgos.torch.optim.default_lr` (measured per name; 1e-3 for
        a class or factory); the rate used is ``lr_``.
    scheduler : None, {"wsd", "cosine", "constant"} or LRScheduler class, \
            default=None
        Stepped once per batch. ``"wsd"`` and ``"cosine"`` span the steps of
        the call plus one, so the last step taken has a positive rate (see
        Notes for continuations). A class gets ``total_steps`` when it
        accepts it, and the ``scheduler__*`` parameters.
    max_epochs : "auto" or int, default="auto"
        Epoch budget of ``fit``. ``"auto"`` ties it to the data size: at
        least 20 epochs and 2000 optimizer steps, at most 1000 epochs
        (iris, 112 rows in 2 batches: 1000 epochs; 20,000 rows: 20), and
        the plateau rule below ends most fits well before; the budget used
        is ``max_epochs_``. (Before, the default was 20 epochs: 40 steps on
        iris, accuracy 0.82 against MLPClassifier's 0.97.)
    batch_size : int, default=64
    shuffle : bool, default=True
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` (0.1 when None; stratified), stop
        after ``n_iter_no_change`` epochs without a validation-loss
        improvement of ``tol``, and restore the best module weights (an
        :class:`~skalgos.torch.callbacks.EarlyStopping` put first in
        ``callbacks_``). Without it, ``fit`` stops after
        ``n_iter_no_change`` epochs whose training loss is not below the
        best by ``tol`` (MLPClassifier's rule).
    validation_fraction : float in (0, 1) or None, default=None
        Hold out this fraction (stratified for classifiers) and record
        ``valid_loss`` every epoch, with or without early stopping.
    n_iter_no_change : int, default=10
        As MLPClassifier's.
    tol : float or None, default=1e-4
        Improvement threshold of both stopping rules; None disables the
        training-loss plateau rule (``fit`` then runs ``max_epochs``).
    gradient_clip : float > 0 or None, default=None
        Clip the global gradient norm to this value after every backward
        pass (inside the closure, so SAM's ascent gradient is clipped too).
    callbacks : list or None, default=None
        Epoch-end hooks, skorch-style: callables ``cb(estimator, history)``
        or objects with ``on_epoch_end(estimator, history)`` (and optionally
        ``on_train_begin(estimator)``, ``on_train_end(estimator, history)``),
        e.g. :class:`~skalgos.torch.callbacks.EarlyStopping` and
        :class:`~skalgos.torch.callbacks.Checkpoint`. Returning ``True``
        stops training. Deep-copied into ``callbacks_`` at each fresh fit.
    bn_recalibration_batches : int, default=50
        For optimizers with a train/eval switch (schedule-free): after
        switching to the evaluation weights, recompute BatchNorm statistics
        over this many training batches.
    dtype : None, str, numpy or torch dtype, default=None
        The dtype X reaches the module with. None: int64 for integer X with
        a user ``module`` (token ids for ``nn.Embedding`` /
        ``nn.EmbeddingBag``), float32 otherwise. A float dtype (e.g.
        ``"float64"``) also sets the module's dtype.
    device : "auto", str or torch.device, default="cpu"
        ``"auto"`` is CUDA when available, else the CPU; the device used is
        ``device_``.
    n_jobs : int, default=None
        torch intra-op threads during ``fit`` and ``predict`` (restored
        afterwards); ``None`` leaves torch's setting alone, -1 is all cores.
        Small modules on a busy machine train fastest with ``n_jobs=1``.
    warm_start : bool, default=False
        Reuse the fitted module and optimizer on the next ``fit`` (the
        schedule continues, see Notes).
    max_history : int or None, default=10_000
        Epochs kept in ``history_``: the last ``max_history`` ones, in
        preallocated arrays (at most 1,000 epochs allocated at a time), so
        that a long stream of ``partial_fit`` calls keeps memory flat.
        ``None`` keeps every epoch (memory then grows with the stream).
    random_state : int, RandomState instance or None, default=None
        Seeds module initialization, shuffling and dropout (torch's global
        RNG is left as it was).
    verbose : int, default=0
        Print one progress line per epoch, starting with
        ``[TorchClassifier]``.
    **kwargs
        Nested parameters, skorch-style: ``module__*``, ``optimizer__*``,
        ``scheduler__*``, ``criterion__*``. ``set_params`` rejects any other
        unknown key with a ``ValueError``, as scikit-learn does.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    module_ : torch.nn.Module
    optimizer_ : torch.optim.Optimizer
    scheduler_ : LRScheduler or None
    criterion_ : callable
    callbacks_ : list
        The fit's copies of ``callbacks`` (after the early-stopping one).
    lr_ : float
        The learning rate used (``lr`` resolved).
    max_epochs_ : int
        The epoch budget of the last ``fit`` (``max_epochs`` resolved).
    device_ : torch.device
    history_ : sequence of dict
        One dict per epoch (the last ``max_history`` epochs, oldest first):
        ``epoch``, ``train_loss`` (mean over the epoch's batches), ``lr``
        (the rate of the epoch's first step), ``valid_loss`` (with a
        validation split), ``dur``. It indexes, slices and iterates like a
        list; each row is built on access (editing it changes nothing), and
        ``history_.column(key)`` gives one key as an array.
    n_iter_ : int
        Epochs run.
    t_ : int
        Optimizer steps taken.
    n_features_in_ : int
        ``X.shape[1]`` (the channels of an image batch (n, C, H, W)).
    feature_names_in_ : ndarray of shape (n_features,)
        Only when X has string feature names.

    Notes
    -----
    The fit loop passes a closure (zero grads, forward, loss, backward) to
    every optimizer whose ``step`` accepts one, and honours two optimizer
    flags: ``requires_closure`` (SAM-like optimizers call it themselves) and
    ``requires_mode_switch`` (schedule-free: ``optimizer.train()`` before
    training, ``optimizer.eval()`` before validation, prediction and at the
    end of ``fit``, with BatchNorm recalibration).

    **Inputs.** X of shape (n_samples, ...) reaches the module as it is (a
    batch of images (n, C, H, W) for a Conv2d module, token ids for an
    EmbeddingBag); the default :class:`MLP` flattens it. A module class or
    factory gets ``n_features_in=X.shape[1]``, ``n_outputs`` and, when it
    asks for it, ``input_shape=X.shape[1:]``.

    **Failing loudly.** A non-finite training loss raises
    ``FloatingPointError`` naming the epoch and step and suggesting a
    smaller lr; with early stopping (or any callback holding best weights
    with ``load_best=True``) the best weights are restored instead, with a
    ``ConvergenceWarning``, and training stops. A final training loss more
    than 100 times the best epoch's warns (``ConvergenceWarning``).

    **Continuations** (``partial_fit`` after a fit, or ``warm_start``) of
    ``k`` more steps after ``T0`` steps re-plan the schedule to end at
    ``T1 = T0 + k`` and continue at step ``T0``: ``"wsd"`` takes the
    cooldown fraction (and, if needed, the base-rate scale) that
    :func:`skalgos.torch.lr_scheduler.extend_horizon` gives for ``T0 ->
    T1``, so the rate jumps from its cooled-down value back up to the
    re-planned one; ``"cosine"`` stretches the half cosine over ``T1``,
    which continues below the base rate (it never restarts at ``lr``).
    Other schedulers are stepped on as they are.

    See Also
    --------
    skalgos.torch.optim.register_optimizer : add an optimizer name.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skalgos.torch import TorchClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = TorchClassifier(optimizer="muon", max_epochs=30,
    ...                       n_jobs=1, random_state=0).fit(X, y)
    >>> clf.lr_, clf.score(X, y) > 0.9
    (0.01, True)
    """

    _default_criterion = "cross_entropy"
    _lr_task = "classification"
    _stratify = True

    def _trivial_loss(self, y, w=None):
        # The cross-entropy of predicting the training class frequencies: a
        # fit that ends above it has learnt less than the priors (unscaled
        # features, a wrong lr), which accuracy alone can hide.
        counts = np.bincount(
            y.cpu().numpy(),
            weights=None if w is None else w.double().cpu().numpy(),
            minlength=self._n_outputs,
        )
        p = counts[counts > 0] / counts.sum()
        return (
            float(-(p * np.log(p)).sum()),
            "predicting the class frequencies",
            "Standardise the features (e.g. StandardScaler in a Pipeline)",
        )

    def _encode(self, y, classes=None):
        check_classification_targets(y)
        if not hasattr(self, "_label_encoder") or classes is not None:
            self._label_encoder = LabelEncoder().fit(
                y if classes is None else np.asarray(classes)
            )
            self.classes_ = self._label_encoder.classes_
        missing = np.setdiff1d(np.unique(y), self.classes_)
        if missing.size:
            raise ValueError(
                f"y has labels {missing.tolist()} not in classes {self.classes_}."
            )
        return torch.as_tensor(
            self._label_encoder.transform(y), dtype=torch.int64, device=self.device_
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train the module from scratch (or continue, with ``warm_start``).

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: each sample's loss is multiplied by its
            weight (integer weights act as repeated rows).

        Returns
        -------
        self : TorchClassifier
        """
        if self.warm_start and hasattr(self, "module_"):
            X, y = self._validate_X(X, y, reset=False)
            return self._run(
                self._to_tensor_X(X),
                self._encode(y),
                epochs=None,
                first=False,
                sample_weight=self._sample_weight(sample_weight, X),
            )
        X, y = self._validate_X(X, y, reset=True)
        self.device_ = _resolve_device(self.device)
        if hasattr(self, "_label_encoder"):
            del self._label_encoder
        yt = self._encode(y)
        self._n_outputs = len(self.classes_)
        return self._run(
            self._to_tensor_X(X),
            yt,
            epochs=None,
            first=True,
            sample_weight=self._sample_weight(sample_weight, X),
        )

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One epoch over ``(X, y)``, starting from the current state.

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
        y : array-like of shape (n_samples,)
        classes : array-like, default=None
            All labels; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None
            As in :meth:`fit`.

        Returns
        -------
        self : TorchClassifier
        """
        first = not hasattr(self, "module_")
        if first:
            self._validate_params()
            if classes is None:
                raise ValueError(
                    "classes must be given on the first call to partial_fit."
                )
        X, y = self._validate_X(X, y, reset=first)
        if first:
            self.device_ = _resolve_device(self.device)
            yt = self._encode(y, classes)
            self._n_outputs = len(self.classes_)
        else:
            yt = self._encode(y)
        return self._run(
            self._to_tensor_X(X),
            yt,
            epochs=1,
            first=first,
            sample_weight=self._sample_weight(sample_weight, X),
        )

    def predict_proba(self, X):
        """Softmax of the module's logits.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        logits = self._forward(X)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, X):
        """Class with the largest logit.

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        logits = self._forward(X)
        return self.classes_[np.argmax(logits, axis=1)]


class TorchRegressor(RegressorMixin, _BaseTorchEstimator):
    """Regressor that trains a torch module, with any registered optimizer.

    A drop-in for :class:`~sklearn.neural_network.MLPRegressor` when
    ``module=None``. Parameters, attributes and the fit loop are those of
    :class:`TorchClassifier`, except that ``criterion=None`` is the mean
    squared error, the module outputs ``n_outputs`` values (1 for a 1-D
    ``y``), early stopping is not stratified, and there is no
    ``classes_`` / ``predict_proba``.

    Parameters
    ----------
    module, criterion, optimizer, lr, scheduler, max_epochs, batch_size, \
shuffle, validation_fraction, n_iter_no_change, tol, \
gradient_clip, callbacks, bn_recalibration_batches, dtype, device, n_jobs, \
warm_start, max_history, random_state, verbose, **kwargs
        See :class:`TorchClassifier`. ``lr="auto"`` takes the name's
        regression rate, ``default_lr(name, task="regression")`` (smaller
        than the classification rate for sgd, sam, tsam and sgd_sf, which
        diverge on a squared loss at it).
    early_stopping : "auto" or bool, default="auto"
        As in :class:`TorchClassifier`; ``"auto"`` turns it on from 20
        training samples on (a 10% validation split, best weights
        restored), off below.
    standardize_target : bool, default=True
        Train on ``(y - y_mean_) / y_scale_`` and undo it in ``predict``,
        as ``TransformedTargetRegressor(transformer=StandardScaler())``
        would: the per-name learning rates are measured on unit-scale
        targets, and a raw target in the hundreds (diabetes) gave R^2
        -2.86 at the old defaults. Under ``partial_fit`` the first call's
        targets fix the scaling. ``False`` trains on ``y`` as given.

    Attributes
    ----------
    module_, optimizer_, scheduler_, criterion_, callbacks_, lr_, device_, \
history_, n_iter_, t_, n_features_in_, max_epochs_
        See :class:`TorchClassifier`. Predictions are float32 for float32
        X, float64 otherwise.
    y_mean_, y_scale_ : ndarray of shape (n_outputs,)
        The target's (weighted) mean and standard deviation (0 and 1 with
        ``standardize_target=False``; a constant target keeps scale 1).

    Examples
    --------
    >>> import numpy as np
    >>> from skalgos.torch import TorchRegressor
    >>> X = np.linspace(-1, 1, 64).reshape(-1, 1)
    >>> reg = TorchRegressor(lr=1e-2, max_epochs=60, batch_size=16, n_jobs=1,
    ...                      random_state=0).fit(X, 2 * X.ravel())
    >>> reg.score(X, 2 * X.ravel()) > 0.95
    True
    """

    _default_criterion = "mse"
    _lr_task = "regression"
    _stratify = False

    _parameter_constraints = {
        **_BaseTorchEstimator._parameter_constraints,
        "early_stopping": ["boolean", StrOptions({"auto"})],
        "standardize_target": ["boolean"],
    }

    def __init__(
        self,
        module=None,
        *,
        criterion=None,
        optimizer="adamw",
        lr="auto",
        scheduler=None,
        max_epochs="auto",
        batch_size=64,
        shuffle=True,
        early_stopping="auto",
        validation_fraction=None,
        n_iter_no_change=10,
        tol=1e-4,
        gradient_clip=None,
        callbacks=None,
        bn_recalibration_batches=50,
        standardize_target=True,
        dtype=None,
        device="cpu",
        n_jobs=None,
        warm_start=False,
        max_history=10_000,
        random_state=None,
        verbose=0,
        **kwargs,
    ):
        super().__init__(
            module,
            criterion=criterion,
            optimizer=optimizer,
            lr=lr,
            scheduler=scheduler,
            max_epochs=max_epochs,
            batch_size=batch_size,
            shuffle=shuffle,
            early_stopping=early_stopping,
            validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change,
            tol=tol,
            gradient_clip=gradient_clip,
            callbacks=callbacks,
            bn_recalibration_batches=bn_recalibration_batches,
            dtype=dtype,
            device=device,
            n_jobs=n_jobs,
            warm_start=warm_start,
            max_history=max_history,
            random_state=random_state,
            verbose=verbose,
            **kwargs,
        )
        self.standardize_target = standardize_target

    def _trivial_loss(self, y, w=None):
        # The loss of predicting the training mean: a fit that ends above it
        # has learnt nothing (unscaled features, a wrong lr).
        y = y.double()
        if w is None:
            var = y.var(dim=0, unbiased=False)
        else:
            w = w.double().reshape(-1, 1) / w.double().sum()
            var = (w * (y - (w * y).sum(dim=0)) ** 2).sum(dim=0)
        advice = "Standardise the features (e.g. StandardScaler in a Pipeline)"
        if not self.standardize_target:
            advice += " and the target (standardize_target=True)"
        return float(var.mean()), "predicting the mean of y", advice

    def _fit_target_scaling(self, y, sample_weight):
        """``y_mean_`` and ``y_scale_`` (weighted, as repeated rows would)."""
        y2 = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
        k = y2.shape[1]
        if not self.standardize_target:
            self.y_mean_, self.y_scale_ = np.zeros(k), np.ones(k)
            return
        w = None
        if sample_weight is not None:
            w = _check_sample_weight(sample_weight, y2, dtype=np.float64)
            if not w.sum() > 0:
                w = None  # _sample_weight raises the clear error
        # the moments of y / u (u a power of two near max|y|: exact), scaled
        # back, so that the squares of a y near 1e300 do not overflow
        amax = float(np.max(np.abs(y2))) if y2.size else 0.0
        unit = math.ldexp(1.0, math.frexp(amax)[1] - 1) if amax > 0 else 1.0
        mean, scale = target_mean_scale(y2 / unit, w)
        self.y_mean_, self.y_scale_ = mean * unit, scale * unit

    def _target(self, y):
        y = np.asarray(y, dtype=np.float64)
        self._y_ndim = getattr(self, "_y_ndim", y.ndim)
        y2 = (y.reshape(len(y), -1) - self.y_mean_) / self.y_scale_
        dtype = self._float_dtype()
        # as for X (_validate_X): a target whose squares overflow the working
        # dtype makes the loss infinite
        limit = float(np.sqrt(torch.finfo(dtype).max)) / 1e3
        big = float(np.max(np.abs(y2))) if y2.size else 0.0
        if big > limit:
            how = (
                " after the scaling fixed by the first call (y_mean_, y_scale_); "
                "refit with y of the first call's scale, or rescale y"
                if self.standardize_target
                else "; pass standardize_target=True (scale-equivariant) or "
                "rescale y (e.g. TransformedTargetRegressor with StandardScaler)"
            )
            raise ValueError(
                f"y has values of magnitude {big:.3g} that overflow {dtype} (the "
                f"working dtype) in training{how}."
            )
        return torch.as_tensor(y2, dtype=dtype, device=self.device_)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train the module from scratch (or continue, with ``warm_start``).

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: each sample's loss (and, with
            ``standardize_target``, its share of the target's mean and
            scale) is multiplied by its weight, so integer weights act as
            repeated rows.

        Returns
        -------
        self : TorchRegressor
        """
        if self.warm_start and hasattr(self, "module_"):
            X, y = self._validate_X(
                X, y, reset=False, multi_output=True, y_numeric=True
            )
            return self._run(
                self._to_tensor_X(X),
                self._target(y),
                epochs=None,
                first=False,
                sample_weight=self._sample_weight(sample_weight, X),
            )
        X, y = self._validate_X(X, y, reset=True, multi_output=True, y_numeric=True)
        self.device_ = _resolve_device(self.device)
        self._y_ndim = np.ndim(y)
        self._fit_target_scaling(y, sample_weight)
        yt = self._target(y)
        self._n_outputs = yt.shape[1]
        return self._run(
            self._to_tensor_X(X),
            yt,
            epochs=None,
            first=True,
            sample_weight=self._sample_weight(sample_weight, X),
        )

    def partial_fit(self, X, y, sample_weight=None):
        """One epoch over ``(X, y)``, starting from the current state.

        With ``standardize_target``, the first call's targets fix
        ``y_mean_`` and ``y_scale_`` for every later call (the module's
        outputs are in those units).

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), default=None
            As in :meth:`fit`.

        Returns
        -------
        self : TorchRegressor
        """
        first = not hasattr(self, "module_")
        if first:
            self._validate_params()
        X, y = self._validate_X(X, y, reset=first, multi_output=True, y_numeric=True)
        if first:
            self.device_ = _resolve_device(self.device)
            self._y_ndim = np.ndim(y)
            self._fit_target_scaling(y, sample_weight)
        yt = self._target(y)
        if first:
            self._n_outputs = yt.shape[1]
        return self._run(
            self._to_tensor_X(X),
            yt,
            epochs=1,
            first=first,
            sample_weight=self._sample_weight(sample_weight, X),
        )

    def predict(self, X):
        """Module output, in the units of ``y`` (``standardize_target`` undone).

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        out = self._forward(X) * self.y_scale_ + self.y_mean_
        dtype = float_dtype(X)
        if out.size and np.max(np.abs(out)) > np.finfo(dtype).max:
            raise ValueError(
                f"The predictions reach {np.max(np.abs(out)):.3g}, beyond {dtype}, "
                f"the dtype of X (predictions follow it): pass X as float64."
            )
        out = out.astype(dtype, copy=False)
        return out.ravel() if self._y_ndim == 1 else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
