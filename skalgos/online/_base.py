"""The delayed-feedback protocol shared by every online learner.

Round ``t``: the learner predicts for row ``t`` with its current state; the
label of row ``t`` reaches it at the end of round ``t + delays[t]`` together
with the point it played, and only then does it update. ``delays=None`` is
scikit-learn's usual ``partial_fit`` (every label arrives at once, in order).
"""

import heapq
from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from ..utils.validation import check_delays, float_dtype, validate_data


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
        return (-y / (1.0 + np.exp(y * margin))) * x


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
    }

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
        self.d_tot_ = 0
        self.d_max_ = 0
        self._sigma_sum = 0  # sum over rounds so far of (sigma_t + 1)
        self.online_predictions_ = []
        self.losses_ = []
        self._init_state(n_features + int(self.fit_intercept))

    def _encode_y(self, y):
        return np.asarray(y, dtype=float)

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
        self.online_predictions_.append(self._decode_prediction(margin))
        return margin, w.copy()

    def _run(self, X, y, delays):
        Xf = self._features(X)
        yy = self._encode_y(y)
        loss = self._loss()
        for i in range(Xf.shape[0]):
            x = Xf[i]
            margin, w = self._play(x)
            self.losses_.append(float(self._round_loss(loss, margin, yy[i], w)))
            d = int(delays[i])
            self.d_tot_ += d
            self.d_max_ = max(self.d_max_, d)
            heapq.heappush(self.pending_, (self.t_ + d, self.t_, x, yy[i], w))
            self.t_ += 1
            # the labels due at the end of this round (arrival round < t_)
            while self.pending_ and self.pending_[0][0] < self.t_:
                _, s, xs, ys, ws = heapq.heappop(self.pending_)
                self._observe(s, xs, ys, ws)
                self.n_observed_ += 1

    def _round_loss(self, loss, margin, y, w):
        return loss.value(margin, y)

    def _observe(self, s, x, y, w):
        self._update(x, y, w)

    def _predict_raw(self, x, w):
        return float(w @ x)

    def _decode_prediction(self, margin):
        return margin

    def _validate_xy(self, X, y, reset):
        X, y = validate_data(self, X, y, reset=reset, dtype=np.float64, y_numeric=True)
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinite labels; drop those rows.")
        return X, y

    def fit(self, X, y, delays=None):
        """Play the whole stream ``(X, y)`` under ``delays`` from a fresh state.

        Parameters
        ----------
        X : array-like of shape (n_rounds, n_features)
        y : array-like of shape (n_rounds,)
        delays : array-like of shape (n_rounds,) or int, default=None
            ``delays[t]``: the label of row ``t`` arrives after that many
            further rows (0: before the next prediction). None means 0.

        Returns
        -------
        self : object
        """
        self._validate_params()
        X, y = self._validate_xy(X, y, reset=True)
        self._check_targets(y, reset=True)
        self._reset(X.shape[1])
        self._run(X, y, check_delays(delays, X.shape[0]))
        return self

    def partial_fit(self, X, y, delays=None, classes=None):
        """Continue the stream with rows ``(X, y)``; pending labels carry over.

        Calling ``partial_fit`` on consecutive chunks gives the same state as
        one ``fit`` on the whole stream with the concatenated delays.

        Parameters
        ----------
        X : array-like of shape (n_rounds, n_features)
        y : array-like of shape (n_rounds,)
        delays : array-like of shape (n_rounds,) or int, default=None
        classes : array-like, default=None
            For classifiers, the two class labels (needed on the first call
            if the first chunk holds only one class).

        Returns
        -------
        self : object
        """
        first = not hasattr(self, "t_")
        if first:
            self._validate_params()
        X, y = self._validate_xy(X, y, reset=first)
        self._check_targets(y, reset=first, classes=classes)
        if first:
            self._reset(X.shape[1])
        self._run(X, y, check_delays(delays, X.shape[0]))
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
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._features(X) @ self._point()

    def _hindsight_losses(self, w, X, y):
        """Per-round losses of the fixed weights ``w`` (for the regret)."""
        Xf = self._features(np.asarray(X, dtype=float))
        return self._loss().value(Xf @ w, self._encode_y(y))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


class _DelayedRegressorMixin(RegressorMixin, _DelayedOnlineMixin):
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
        return self._decision(X).astype(float_dtype(X), copy=False)


class _DelayedClassifierMixin(ClassifierMixin, _DelayedOnlineMixin):
    """Binary classification with labels mapped to -1 / +1 (logistic loss)."""

    def _loss(self):
        return _LogisticLoss

    def _validate_xy(self, X, y, reset):
        X, y = validate_data(self, X, y, reset=reset, dtype=np.float64, y_numeric=False)
        return X, y

    def _check_targets(self, y, reset, classes=None):
        if reset:
            if classes is None:
                kind = type_of_target(y, input_name="y", raise_unknown=True)
                if kind not in ("binary", "multiclass"):
                    raise ValueError(f"Unknown label type: {kind}.")
                classes = np.unique(y)
            classes = np.asarray(classes)
            if classes.size > 2:
                raise ValueError(
                    "Only binary classification is supported. The type of the "
                    f"target is multiclass ({classes.size} classes); "
                    f"{type(self).__name__} uses the logistic loss. Wrap it in "
                    "sklearn.multiclass.OneVsRestClassifier for more classes."
                )
            if classes.size < 2:
                raise ValueError(
                    "Only one class present in y; a binary classifier needs two "
                    "(pass classes=[a, b] to partial_fit)."
                )
            self.classes_ = classes
        elif not np.all(np.isin(y, self.classes_)):
            raise ValueError(f"y has labels outside the classes {self.classes_}.")

    def _encode_y(self, y):
        return np.where(np.asarray(y) == self.classes_[1], 1.0, -1.0)

    def _decode_prediction(self, margin):
        return 1.0 / (1.0 + np.exp(-margin))

    def decision_function(self, X):
        """Signed margin ``w . x`` with the current weights."""
        return self._decision(X)

    def predict_proba(self, X):
        """Probabilities of ``classes_`` under the logistic model."""
        p = 1.0 / (1.0 + np.exp(-self._decision(X)))
        return np.column_stack([1 - p, p])

    def predict(self, X):
        """The more probable class."""
        margin = self._decision(X)
        return self.classes_[(margin > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


_RADIUS = [None, Interval(Real, 0, None, closed="neither")]
