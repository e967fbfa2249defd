"""The delayed-feedback protocol shared by every online learner.

Round ``t``: the learner predicts for row ``t`` with its current state; the
label of row ``t`` reaches it at the end of round ``t + delays[t]`` together
with the point it played, and only then does it update. ``delays=None`` is
scikit-learn's usual ``partial_fit`` (every label arrives at once, in order).
"""

import heapq
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import ClassifierMixin, RegressorMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from ..utils.validation import check_delays, float_dtype, validate_data

# Largest |X| (and, with standardize=False, |y|) the learners take: the
# squared loss's gradient (w.x - y) x is quadratic in x and their states hold
# sums of squared gradients over the stream (g g^T, ||g||^2), quartic in x,
# so 1e50 (1e200 after the fourth power) leaves 1e108 of float64 headroom for
# the number of rounds, the features, the radius and the condition number of
# ONS's A (its A-norm projection broke down on features of 1e57).
MAX_MAGNITUDE = 1e50

# rounds of history allocated at once (the window's size when smaller)
_HISTORY_CHUNK = 10_000


class _RoundHistory:
    """The online predictions and losses of the last ``maxlen`` rounds.

    A ring buffer of preallocated float64 arrays (``maxlen=None``: every
    round, the arrays doubling as needed; ``0``: none). The window is
    allocated once, ``min(maxlen, 10_000)`` rounds at the first round and
    grown geometrically beyond, so a stream of any length adds nothing once
    the window is full. ``total`` is the running sum of the losses filled
    in (every round, kept or not); ``n`` the rounds recorded.
    """

    def __init__(self, maxlen, width=0):
        self.maxlen = maxlen
        self.width = int(width)
        self.n = 0
        self.total = 0.0
        self._alloc(0)

    def _alloc(self, cap):
        shape = (cap, self.width) if self.width else (cap,)
        self._pred = np.full(shape, np.nan)
        self._loss = np.full(cap, np.nan)

    @property
    def capacity(self):
        return self._loss.shape[0]

    def __len__(self):
        return min(self.n, self.capacity)

    def _grow(self, need):
        cap = self.capacity
        limit = np.inf if self.maxlen is None else self.maxlen
        new = int(min(limit, max(need, 2 * cap, min(limit, _HISTORY_CHUNK))))
        if new <= cap:
            return
        pred, loss = self._ordered()
        self._alloc(new)
        self._pred[: len(loss)] = pred
        self._loss[: len(loss)] = loss

    def push(self, pred, loss):
        """Record a round (``loss`` NaN: filled later by ``set_loss``)."""
        if self.maxlen != 0:
            if self.n >= self.capacity:
                self._grow(self.n + 1)
            i = self.n % self.capacity
            self._pred[i] = pred
            self._loss[i] = loss
        if loss == loss:  # not NaN
            self.total += float(loss)
        self.n += 1

    def set_loss(self, s, loss):
        """The loss of round ``s`` (counted since the reset), known late."""
        self.total += float(loss)
        if self.n - s <= len(self):
            self._loss[s % self.capacity] = loss

    def _ordered(self):
        k, cap = len(self), self.capacity
        if self.n <= cap or cap == 0:
            return self._pred[:k], self._loss[:k]
        i = self.n % cap
        return (
            np.concatenate([self._pred[i:], self._pred[:i]]),
            np.concatenate([self._loss[i:], self._loss[:i]]),
        )

    def predictions(self):
        return self._ordered()[0].copy()

    def losses(self):
        return self._ordered()[1].copy()

    def __getstate__(self):
        # pickles hold the kept rounds only, not the unused window
        state = self.__dict__.copy()
        state["_pred"], state["_loss"] = self._ordered()
        state["_pred"], state["_loss"] = state["_pred"].copy(), state["_loss"].copy()
        return state


def _check_magnitude(a, name, fix):
    """Refuse values beyond :data:`MAX_MAGNITUDE` (the learners' sums of
    squares would overflow) with a ValueError naming the input."""
    big = float(np.max(np.abs(a))) if np.size(a) else 0.0
    if big > MAX_MAGNITUDE:
        raise ValueError(
            f"{name} has values of magnitude {big:.3g}, beyond "
            f"{MAX_MAGNITUDE:.0e}: the online learners keep sums of squares "
            f"over the stream, which overflow float64. {fix}"
        )


class _SquaredLoss:
    """``f(w) = (w.x - y)^2 / 2``."""

    name = "squared"

    @staticmethod
    def value(margin, y):
        return 0.5 * (margin - y) ** 2

    @staticmethod
    def grad(margin, y, x):
        return (margin - y) * x


class _LogisticLoss:
    """``f(w) = log(1 + exp(-y w.x))`` with ``y`` in {-1, +1}."""

    name = "logistic"

    @staticmethod
    def value(margin, y):
        return np.logaddexp(0.0, -y * margin)

    @staticmethod
    def grad(margin, y, x):
        return (-y * expit(-y * margin)) * x


class _DelayedOnlineMixin:
    """Plays the delayed protocol; subclasses define ``_point`` and ``_update``.

    Subclass hooks
    --------------
    ``_init_state(n_features)``
        Fresh learner state.
    ``_point()``
        The parameter vector played now (a copy is stored with the round).
    ``_predict_raw(x, w)``
        The prediction of round ``t`` (defaults to ``w @ x``).
    ``_update(x, y, w_played)``
        Take the feedback of a past round.
    """

    _protocol_constraints = {
        "fit_intercept": ["boolean"],
        "max_iter": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "shuffle": ["boolean"],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "max_history": [Interval(Integral, 0, None, closed="left"), None],
    }

    # passes of a batch ``fit`` without delays (max_iter="auto"), as SGDRegressor
    _AUTO_MAX_ITER = 1000

    def _n_passes(self, delays):
        if self.max_iter != "auto":
            return int(self.max_iter)
        return 1 if delays is not None else self._AUTO_MAX_ITER

    def _resolve_radius(self, X, y, sw=None):
        """``radius_``: the radius, or for "auto" twice the norm of the ridge
        solution (alpha = 1) on the rows given, in the learner's units."""
        r = getattr(self, "radius", None)
        if r != "auto":
            self.radius_ = r
            return
        if X is None:
            raise ValueError(
                f"{type(self).__name__}(radius='auto') sets the ball from the "
                "data given to fit; played row by row (River) there is none: "
                "pass radius=<float> (the paper's setting is radius=1.0)."
            )
        Xf = self._features(X)
        yy = self._encode_y(y)
        sw = np.ones(Xf.shape[0]) if sw is None else np.asarray(sw, dtype=float)
        A = (Xf.T * sw) @ Xf + np.eye(Xf.shape[1])
        w = np.linalg.solve(A, (Xf.T * sw) @ yy)
        self.radius_ = float(max(2.0 * np.linalg.norm(w), 1.0))

    def _check_reach(self, X, y):
        """Warn when the ball cannot hold a predictor of the target's scale."""
        r = getattr(self, "radius_", None)
        if r is None or not isinstance(self, RegressorMixin) or X.shape[0] == 0:
            return
        yy = self._encode_y(y)
        reach = r * float(np.median(np.linalg.norm(self._features(X), axis=1)))
        spread = float(np.sqrt(np.mean((yy - np.mean(yy)) ** 2)))
        if spread > 10 * max(reach, 1e-12):
            warnings.warn(
                f"{type(self).__name__}: the target's spread ({spread:.3g}) is "
                f"more than 10 times what weights in the ball radius={r:.3g} can "
                f"predict ({reach:.3g}); predictions will stay near constant. "
                "Use standardize=True (the default), radius='auto' or a larger "
                "radius.",
                UserWarning,
                stacklevel=3,
            )

    def _loss(self):
        return _SquaredLoss

    def _features(self, X):
        if self.fit_intercept:
            return np.hstack([X, np.ones((X.shape[0], 1))])
        return X

    def _reset(self, n_features):
        self.t_ = 0
        self.pending_ = []
        self.n_observed_ = 0
        self.sigma_max_ = 0
        self._w_observed = 0.0
        self.d_tot_ = 0
        self.d_max_ = 0
        self._sigma_sum = 0  # sum over rounds so far of (sigma_t + 1)
        self._new_history()
        self._init_state(n_features + int(self.fit_intercept))

    def __setstate__(self, state):
        # a model pickled before the history window kept two lists
        if "_history" not in state and "losses_" in state:
            preds = np.asarray(state.pop("online_predictions_"), dtype=float)
            losses = np.asarray(state.pop("losses_"), dtype=float)
            width = preds.shape[1] if preds.ndim == 2 else 0
            h = _RoundHistory(None, width)
            for p, v in zip(preds, losses):
                h.push(p, v)
            state["_history"] = h
        super().__setstate__(state)

    def _new_history(self, maxlen="param", width=0):
        if maxlen == "param":
            maxlen = getattr(self, "max_history", _HISTORY_CHUNK)
        self._history = _RoundHistory(maxlen, width)

    def _record(self, pred, loss):
        self._history.push(pred, loss)

    def _history_or_raise(self, name):
        h = self.__dict__.get("_history")
        if h is None:
            raise AttributeError(
                f"{type(self).__name__} has no {name} before fit or partial_fit."
            )
        return h

    @property
    def online_predictions_(self):
        """Online predictions of the last ``max_history`` rounds played
        (oldest first; the last one is round ``t_ - 1``), each made before
        its label was seen."""
        return self._history_or_raise("online_predictions_").predictions()

    @property
    def losses_(self):
        """Loss of each of the last ``max_history`` rounds at the point
        played (oldest first; NaN while a River round's label is out)."""
        return self._history_or_raise("losses_").losses()

    @property
    def cumulative_loss_(self):
        """Sum of the losses of every round played since the reset (kept in
        the history or not; a River round counts once its label is in)."""
        return self._history_or_raise("cumulative_loss_").total

    # --- target standardisation (regressors with standardize=True) ---------
    def _standardizes(self):
        return bool(getattr(self, "standardize", False))

    def _update_target_scale(self, y, sw, reset):
        if not self._standardizes():
            self._y_loc, self._y_scale = 0.0, 1.0
            return
        if reset:
            self._y_n = self._y_mean = self._y_m2 = 0.0
            self._y_unit = 1.0
        if not hasattr(self, "_y_unit"):  # a model pickled before the unit
            self._y_unit = 1.0
        # The statistics are kept in units of ``_y_unit``, a power of two at
        # least the largest |y| seen, so that no square overflows (or
        # underflows) whatever the target's magnitude; scaling by a power of
        # two is exact, so on ordinary targets nothing changes.
        big = float(np.max(np.abs(y), initial=0.0))
        if big > 0:
            unit = float(2.0 ** np.ceil(np.log2(big)))
            if reset:
                self._y_unit = unit
            elif unit > self._y_unit:  # r < 1: r * r may only underflow to 0
                r = self._y_unit / unit
                self._y_mean *= r
                self._y_m2 *= r * r
                self._y_unit = unit
        u = self._y_unit
        # weighted running mean / variance (Chan et al.'s chunk update)
        n_b = float(np.sum(sw))
        if n_b > 0:
            yu = np.asarray(y, dtype=float) / u
            mean_b = float(np.average(yu, weights=sw))
            m2_b = float(np.sum(sw * (yu - mean_b) ** 2))
            n = self._y_n + n_b
            delta = mean_b - self._y_mean
            self._y_mean += delta * n_b / n
            self._y_m2 += m2_b + delta**2 * self._y_n * n_b / n
            self._y_n = n
        var = self._y_m2 / self._y_n if self._y_n > 0 else 0.0
        mean, std = self._y_mean * u, float(np.sqrt(var)) * u
        self._y_loc = mean
        # a spread below 1e-12 of the mean is rounding: the target is constant
        tiny = np.finfo(np.float64).tiny  # below it, 1 / std overflows
        self._y_scale = std if std > 1e-12 * abs(mean) and std >= tiny else 1.0

    _y_loc = 0.0  # target standardisation (identity unless standardize=True)
    _y_scale = 1.0

    def _play(self, x):
        """Round ``t_``: predict ``x`` with the current state.

        Counts the labels missing now; returns the raw margin and a copy of
        the point played (the caller records the round as pending and
        advances ``t_``).
        """
        sigma = len(self.pending_)
        self.sigma_max_ = max(self.sigma_max_, sigma)
        self._sigma_sum += sigma + 1
        w = self._point()
        margin = self._predict_raw(x, w)
        return margin, w.copy()

    def _run(self, X, y, delays, sample_weight=None):
        if sample_weight is not None:
            keep = sample_weight > 0  # a row of weight 0 is a row not played
            if not np.all(keep):
                X, y, delays = X[keep], y[keep], delays[keep]
            sample_weight = sample_weight[keep]
        else:
            sample_weight = np.ones(X.shape[0])
        Xf = self._features(X)
        yy = self._encode_y(y)
        loss = self._loss()
        n = Xf.shape[0]
        losses, preds = np.empty(n), np.empty(n)
        for i in range(n):
            x = Xf[i]
            margin, w = self._play(x)
            preds[i] = self._decode_prediction(margin)
            losses[i] = float(self._round_loss(loss, margin, yy[i], w))
            self._record(preds[i], losses[i])
            d = int(delays[i])
            self.d_tot_ += d
            self.d_max_ = max(self.d_max_, d)
            heapq.heappush(
                self.pending_,
                (self.t_ + d, self.t_, x, yy[i], w, float(sample_weight[i])),
            )
            self.t_ += 1
            # the labels due at the end of this round (arrival round < t_)
            while self.pending_ and self.pending_[0][0] < self.t_:
                _, s, xs, ys, ws, sws = heapq.heappop(self.pending_)
                self._observe(s, xs, ys, ws, sws)
                self.n_observed_ += 1
                self._w_observed += sws
        self._last_predictions = preds  # this call's rounds (one-vs-rest)
        return losses, sample_weight

    def _round_loss(self, loss, margin, y, w):
        return loss.value(margin, y)

    def _observe(self, s, x, y, w, sw=1.0):
        self._update(x, y, w, sw)

    def _predict_raw(self, x, w):
        return float(w @ x)

    def _decode_prediction(self, margin):
        return self._y_loc + self._y_scale * margin

    def _validate_xy(self, X, y, reset):
        X, y = validate_data(
            self, X, y, reset=reset, dtype=np.float64, y_numeric=True, densify=True
        )
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinite labels; drop those rows.")
        self._check_X(X)
        self._check_y(y)
        return X, y

    def _check_y(self, y):
        if self._standardizes():
            return  # scaled inside: any finite magnitude
        _check_magnitude(
            y,
            "y",
            f"With {type(self).__name__}(standardize=False) the target is "
            "used as given: pass standardize=True (the target is then "
            "scaled inside, any finite magnitude), or wrap the learner in "
            "sklearn.compose.TransformedTargetRegressor(regressor=..., "
            "transformer=StandardScaler()).",
        )

    def _check_X(self, X):
        _check_magnitude(
            X,
            "X",
            "Scale the features first, e.g. with "
            "sklearn.preprocessing.StandardScaler in a Pipeline.",
        )

    def _validate_X(self, X):
        """``X`` of predict / decision_function: validated and in range."""
        X = validate_data(self, X, reset=False, dtype=np.float64, densify=True)
        self._check_X(X)
        return X

    def fit(self, X, y, delays=None, sample_weight=None):
        """Fit on ``(X, y)`` from a fresh state.

        With ``delays`` given (or ``max_iter=1``) this plays the stream once,
        in order, under the delayed protocol: the paper's setting. Without
        delays and with ``max_iter="auto"`` it makes up to 1000 passes over
        the (shuffled, ``shuffle=True``) rows, as SGDRegressor does, and
        stops once the mean online loss of a pass has not improved by
        ``tol`` for ``n_iter_no_change`` passes.

        Parameters
        ----------
        X : array-like of shape (n_rounds, n_features)
        y : array-like of shape (n_rounds,)
        delays : array-like of shape (n_rounds,) or int, default=None
            ``delays[t]``: the label of row ``t`` arrives after that many
            further rows (0: before the next prediction). None means 0.
        sample_weight : array-like of shape (n_rounds,), default=None
            Each row's loss is multiplied by its weight; a row of weight 0
            is not played.

        Returns
        -------
        self : object
        """
        self._validate_params()
        X, y = self._validate_xy(X, y, reset=True)
        sw = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        self._check_targets(y, reset=True)
        self._update_target_scale(y, sw, reset=True)
        self._start(X, y, sw)
        d = check_delays(delays, X.shape[0])
        passes = self._n_passes(delays)
        rng = check_random_state(self.random_state)
        best, stale = np.inf, 0
        self.n_iter_ = 0
        for _ in range(passes):
            idx = np.arange(X.shape[0])
            if passes > 1 and self.shuffle:
                idx = rng.permutation(X.shape[0])
            losses, w = self._run(X[idx], y[idx], d[idx], sw[idx])
            self.n_iter_ += 1
            if passes == 1 or self.tol is None or w.sum() == 0:
                continue
            loss = float(np.average(losses, weights=w))
            stale = stale + 1 if loss > best - self.tol else 0
            best = min(best, loss)
            if stale >= self.n_iter_no_change:
                break
        return self

    def _start(self, X, y, sw=None):
        self._resolve_radius(X, y, sw)
        self._check_reach(X, y)
        self._reset(X.shape[1])

    def partial_fit(self, X, y, delays=None, classes=None, sample_weight=None):
        """Continue the stream with rows ``(X, y)`` (one pass); pending labels
        carry over.

        Calling ``partial_fit`` on consecutive chunks gives the same state as
        one single-pass ``fit`` on the whole stream with the concatenated
        delays (with ``standardize=False``; with it the target's running
        mean and variance are updated chunk by chunk).

        Parameters
        ----------
        X : array-like of shape (n_rounds, n_features)
        y : array-like of shape (n_rounds,)
        delays : array-like of shape (n_rounds,) or int, default=None
        classes : array-like, default=None
            For classifiers, all the class labels (needed on the first call
            if the first chunk does not hold every class).
        sample_weight : array-like of shape (n_rounds,), default=None

        Returns
        -------
        self : object
        """
        first = not hasattr(self, "t_")
        if first:
            self._validate_params()
        X, y = self._validate_xy(X, y, reset=first)
        sw = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        self._check_targets(y, reset=first, classes=classes)
        self._update_target_scale(y, sw, reset=first)
        if first:
            self._start(X, y, sw)
        self._run(X, y, check_delays(delays, X.shape[0]), sw)
        return self

    def _check_targets(self, y, reset, classes=None):
        pass

    def _current_weights(self):
        check_is_fitted(self, "t_")
        return self._point()

    @property
    def coef_(self):
        """Current weights (without the intercept)."""
        w = self._current_weights()
        return w[:-1].copy() if self.fit_intercept else w.copy()

    @property
    def intercept_(self):
        """Current intercept (0.0 without ``fit_intercept``)."""
        w = self._current_weights()
        return float(w[-1]) if self.fit_intercept else 0.0

    def _decision(self, X):
        check_is_fitted(self, "t_")
        X = self._validate_X(X)
        return self._features(X) @ self._point()

    def _encode_y(self, y):
        y = np.asarray(y, dtype=float)
        if self._y_scale == 1.0 and self._y_loc == 0.0:
            return y
        return (y - self._y_loc) / self._y_scale

    def _hindsight_losses(self, w, X, y):
        """Per-round losses of the fixed weights ``w`` (for the regret)."""
        Xf = self._features(np.asarray(X, dtype=float))
        return self._loss().value(Xf @ w, self._encode_y(y))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        tags.input_tags.sparse = True  # made dense by validate_data(densify=True)
        return tags


class _DelayedRegressorMixin(RegressorMixin, _DelayedOnlineMixin):
    @property
    def coef_(self):
        """Current weights (without the intercept), in the target's units."""
        w = self._current_weights()
        w = w[:-1] if self.fit_intercept else w
        return self._y_scale * w

    @property
    def intercept_(self):
        """Current intercept in the target's units (with ``standardize`` the
        target's running mean plus its scale times the internal intercept)."""
        w = self._current_weights()
        b = float(w[-1]) if self.fit_intercept else 0.0
        return float(self._y_loc + self._y_scale * b)

    def predict(self, X):
        """Predict with the current weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            float32 for float32 ``X``, else float64.
        """
        raw = self._decision(X)
        if self._standardizes():
            raw = self._y_loc + self._y_scale * raw
        return raw.astype(float_dtype(X), copy=False)


class _DelayedClassifierMixin(ClassifierMixin, _DelayedOnlineMixin):
    """Binary classification with labels mapped to -1 / +1 (logistic loss)."""

    def _loss(self):
        return _LogisticLoss

    def _validate_xy(self, X, y, reset):
        X, y = validate_data(
            self, X, y, reset=reset, dtype=np.float64, y_numeric=False, densify=True
        )
        self._check_X(X)
        return X, y

    def _check_targets(self, y, reset, classes=None):
        if reset:
            if classes is None:
                kind = type_of_target(y, input_name="y", raise_unknown=True)
                if kind not in ("binary", "multiclass"):
                    raise ValueError(f"Unknown label type: {kind}.")
                classes = np.unique(y)
            classes = np.asarray(classes)
            if classes.size < 2:
                raise ValueError(
                    "Only one class present in y; a classifier needs two or more "
                    "(pass classes=[a, b, ...] to partial_fit)."
                )
            self.classes_ = classes
        if not np.all(np.isin(y, self.classes_)):
            raise ValueError(f"y has labels outside the classes {self.classes_}.")

    @property
    def _ovr(self):
        return len(self.classes_) > 2

    def _start(self, X, y, sw=None):
        if not self._ovr:
            return super()._start(X, y, sw)
        # one-vs-rest: one binary learner per class, same protocol and delays
        self.estimators_ = []
        for k in self.classes_:
            est = clone(self)
            est.classes_ = np.array([0, 1])
            est.n_features_in_ = X.shape[1]
            est._update_target_scale(None, None, True)
            est._start(X, (y == k).astype(int), sw)
            est._new_history(0)  # the parent keeps the rounds' history
            self.estimators_.append(est)
        self._reset(X.shape[1])
        self._new_history(width=len(self.classes_))

    def _init_state(self, n):
        pass

    def _run(self, X, y, delays, sample_weight=None):
        if not getattr(self, "estimators_", None) or not self._ovr:
            return super()._run(X, y, delays, sample_weight)
        out = [
            e._run(X, (y == k).astype(int), delays, sample_weight)
            for e, k in zip(self.estimators_, self.classes_)
        ]
        first = self.estimators_[0]
        for name in ("t_", "n_observed_", "sigma_max_", "d_tot_", "d_max_"):
            setattr(self, name, getattr(first, name))
        self.pending_ = first.pending_
        p = np.column_stack([e._last_predictions for e in self.estimators_])
        p = p / np.maximum(p.sum(axis=1, keepdims=True), 1e-300)
        losses = np.sum([o[0] for o in out], axis=0)
        for pi, li in zip(p, losses):
            self._record(pi, li)
        return losses, out[0][1]

    def _current_weights(self):
        check_is_fitted(self, "t_")
        if self._ovr:
            return np.vstack([e._point() for e in self.estimators_])
        return self._point()

    @property
    def coef_(self):
        """Current weights (without the intercept); (n_classes, n_features)
        for more than two classes."""
        w = self._current_weights()
        return w[..., :-1].copy() if self.fit_intercept else w.copy()

    @property
    def intercept_(self):
        """Current intercept (0.0 without ``fit_intercept``); one per class
        for more than two classes."""
        w = self._current_weights()
        if w.ndim == 2:
            return w[:, -1].copy() if self.fit_intercept else np.zeros(w.shape[0])
        return float(w[-1]) if self.fit_intercept else 0.0

    def _decision(self, X):
        if getattr(self, "classes_", None) is not None and self._ovr:
            check_is_fitted(self, "t_")
            X = self._validate_X(X)
            return np.column_stack(
                [e._features(X) @ e._point() for e in self.estimators_]
            )
        return super()._decision(X)

    def _encode_y(self, y):
        return np.where(np.asarray(y) == self.classes_[1], 1.0, -1.0)

    def _decode_prediction(self, margin):
        return expit(margin)

    def decision_function(self, X):
        """Margins ``w . x`` with the current weights: shape (n_samples,) for
        two classes (positive means ``classes_[1]``), else (n_samples,
        n_classes), one-vs-rest."""
        return self._decision(X)

    def predict_proba(self, X):
        """Probabilities of ``classes_``: the logistic model for two classes,
        normalised one-vs-rest logistic scores for more (as SGDClassifier)."""
        p = expit(self._decision(X))
        if p.ndim == 1:
            return np.column_stack([1 - p, p])
        s = p.sum(axis=1, keepdims=True)
        return np.where(s > 0, p / np.where(s > 0, s, 1.0), 1.0 / p.shape[1])

    def predict(self, X):
        """The most probable class."""
        margin = self._decision(X)
        if margin.ndim == 2:
            return self.classes_[np.argmax(margin, axis=1)]
        return self.classes_[(margin > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags


_RADIUS = [None, StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")]
