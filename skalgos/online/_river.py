"""River estimators around our delayed learners (River imported on first use).

``as_river(estimator)`` returns an instance of ``RiverRegressor`` or
``RiverClassifier``, subclasses of ``river.base.Regressor`` and
``river.base.Classifier`` created the first time they are asked for, so that
importing :mod:`skalgos.online` never imports River.
"""

import functools
import heapq
import math
from collections import defaultdict, deque

import numpy as np
from sklearn.base import ClassifierMixin, clone

__all__ = ["as_river", "river_delay_to_skalgos"]

_LAZY = ("RiverRegressor", "RiverClassifier")


def river_delay_to_skalgos(delay):
    """Convert River's integer ``delay`` to skalgos' convention.

    River's ``progressive_val_score(..., delay=d)`` reveals the label of row
    ``i`` just before question ``i + d`` (and treats ``d = 0`` like ``d = 1``);
    in skalgos ``d = 0`` already means "before the next prediction". So River's
    ``d`` is our ``max(d, 1) - 1``, and River's ``delay=None`` (answer right
    after the question) is our 0. Labels due before the same question arrive
    oldest row first in both, with one exception: among them River takes a
    row with ``d = 0`` first.

    Parameters
    ----------
    delay : int, None or array-like of int
        River's delay, or one per row (the values a callable ``delay`` gives).

    Returns
    -------
    int or ndarray of int

    Examples
    --------
    >>> from skalgos.online import river_delay_to_skalgos
    >>> [river_delay_to_skalgos(d) for d in (None, 0, 1, 5)]
    [0, 0, 0, 4]
    >>> river_delay_to_skalgos([0, 3, 1])
    array([0, 2, 0])
    """
    if delay is None:
        return 0
    if np.ndim(delay) == 0:
        return max(int(delay), 1) - 1
    d = np.asarray(delay)
    if d.dtype.kind not in "iu" or np.any(d < 0):
        raise ValueError(
            f"River delays must be non-negative integers, got {np.asarray(delay)!r}."
        )
    return np.maximum(d.astype(np.int64), 1) - 1


class _RiverAdapter:
    """The protocol shared by the River regressor and classifier.

    Each ``predict_one`` (or ``predict_proba_one``) is one question, i.e. one
    round of the delayed protocol: the learner plays its current point and
    the round stays pending until ``learn_one`` brings the label of the same
    features (oldest question first). A ``learn_one`` for features that were
    never asked is a round played and answered at once (delay 0).
    """

    def __init__(self, estimator, feature_names=None, track_questions=True):
        self.estimator = estimator
        self.feature_names = feature_names
        self.track_questions = track_questions

    # -------------------------------------------------------------- state
    def _learner(self, x):
        """The wrapped learner, set up on the first dict of features."""
        est = getattr(self, "_est", None)
        if est is not None:
            return est
        names = self.feature_names
        self._names = list(x) if names is None else list(names)
        est = clone(self.estimator)
        est._validate_params()
        est.n_features_in_ = len(self._names)
        if getattr(est, "standardize", False):
            raise ValueError(
                f"{type(est).__name__}(standardize=True) standardises the target "
                "with statistics of the rows given to fit/partial_fit; River "
                "plays one row at a time: pass standardize=False (the paper's "
                "stream setting) and scale the target yourself."
            )
        est._resolve_radius(None, None)
        est._reset(len(self._names))
        if hasattr(est, "_make_copies"):  # BOLD: copies before the first round
            if est.n_copies == "auto":
                raise ValueError(
                    "BOLD(n_copies='auto') takes d_max + 1 from the delays given "
                    "to fit; under River the delays are not known in advance: "
                    "pass BOLD(n_copies=<River delay>)."
                )
            est._make_copies(len(self._names), None, None)
        self._est = est
        self._asked = defaultdict(deque)  # features -> rounds asked, oldest first
        self._margins = {}  # round -> raw margin played
        return est

    def _row(self, x):
        """The learner, the raw row (1, n) and the learner's feature vector."""
        est = self._learner(x)
        try:
            row = np.array([[float(x[k]) for k in self._names]])
        except KeyError as exc:
            raise ValueError(
                f"Feature {exc.args[0]!r} missing from x; this model was set up "
                f"with the features {self._names}."
            ) from None
        est._check_X(row)
        return est, row, est._features(row)[0]

    def _new_round(self, est, xf):
        margin, w = est._play(xf)
        # the loss is filled in when the label arrives
        est._record(est._decode_prediction(margin), math.nan)
        s = est.t_
        # what the round's loss needs later: the margin (and BOLD's copy)
        self._margins[s] = (margin, getattr(est, "_last", None))
        est.t_ += 1
        return s, w, margin

    def _ask(self, x):
        """One question for ``x``; returns the learner's raw margin."""
        est, row, xf = self._row(x)
        if not self.track_questions:
            # a prediction that changes nothing (covariance="all" VAW would
            # add x to its covariance if asked through the protocol)
            if isinstance(est, ClassifierMixin):
                return float(est.decision_function(row)[0])
            return float(est.predict(row)[0])
        s, w, margin = self._new_round(est, xf)
        heapq.heappush(est.pending_, (math.inf, s, xf, None, w, 1.0))
        self._asked[tuple(xf)].append(s)
        return margin

    def _answer(self, x, y):
        est, row, xf = self._row(x)
        if not isinstance(est, ClassifierMixin):
            est._check_y(np.array([float(y)]))
        yy = float(est._encode_y(np.array([y]))[0])
        if not self.track_questions:
            est.partial_fit(row, np.array([y]), delays=[0])
            return
        asked = self._asked.get(tuple(xf))
        if asked:
            s = asked.popleft()
            if not asked:
                del self._asked[tuple(xf)]
            j = next(i for i, item in enumerate(est.pending_) if item[1] == s)
            _, _, xs, _, w, _ = est.pending_[j]
            est.pending_[j] = est.pending_[-1]
            est.pending_.pop()
            heapq.heapify(est.pending_)
        else:  # learned without being asked: a round answered at once
            s, w, _ = self._new_round(est, xf)
            xs = xf
        d = est.t_ - 1 - s
        est.d_tot_ += d
        est.d_max_ = max(est.d_max_, d)
        margin, last = self._margins.pop(s)
        if last is not None:  # BOLD: the copy that played round s
            est._last = last
        est._history.set_loss(s, float(est._round_loss(est._loss(), margin, yy, w)))
        est._observe(s, xs, yy, w)
        est.n_observed_ += 1
        est._w_observed += 1.0

    @property
    def learner_(self):
        """The wrapped skalgos learner, with its protocol state
        (``online_predictions_``, ``losses_``, ``pending_``, ``d_tot_``...)."""
        return getattr(self, "_est", None)


class _RegressorMixin(_RiverAdapter):
    def predict_one(self, x, **kwargs):
        """Predict ``x`` (one question of the delayed protocol)."""
        return float(self._ask(x))

    def learn_one(self, x, y, **kwargs):
        """Take the label ``y`` of features ``x``."""
        self._answer(x, y)


class _ClassifierMixin(_RiverAdapter):
    def __init__(
        self, estimator, feature_names=None, track_questions=True, classes=None
    ):
        super().__init__(estimator, feature_names, track_questions)
        self.classes = classes

    def _set_classes(self, y=None):
        est = self._est
        if hasattr(est, "classes_"):
            return True
        classes = self.classes
        if classes is None and isinstance(y, (bool, np.bool_)):
            classes = [False, True]
        if classes is None:
            if y is None:
                return False
            raise ValueError(
                "The skalgos learners are binary and need both labels up front: "
                "pass classes=[a, b] to as_river (River's boolean labels are "
                f"recognised on their own); got the label {y!r}."
            )
        est._check_targets(np.asarray(classes), reset=True, classes=classes)
        return True

    def predict_proba_one(self, x, **kwargs):
        """Class probabilities of ``x`` (one question of the delayed protocol);
        ``{}`` while the two labels are unknown."""
        p = 1.0 / (1.0 + math.exp(-self._ask(x)))
        if not self._set_classes():
            return {}
        c0, c1 = (c.item() if hasattr(c, "item") else c for c in self._est.classes_)
        return {c0: 1.0 - p, c1: p}

    def learn_one(self, x, y, **kwargs):
        """Take the label ``y`` of features ``x``."""
        self._learner(x)
        self._set_classes(y)
        self._answer(x, y)


_DOC = """A skalgos delayed learner as a River {kind}.

    Made by :func:`as_river`; see there.

    Parameters
    ----------
    estimator : skalgos online {kind_lower}
        Cloned when the first features arrive.
    feature_names : list, default=None
        Feature order; taken from the first dict seen if None.
    track_questions : bool, default=True
        Play the delayed protocol (each prediction is a round that stays
        pending until its label comes back). False: predictions do not
        change the learner and each label is an undelayed update at the
        current weights.
"""


@functools.cache
def _river_classes():
    try:
        from river import base
    except ImportError as exc:  # pragma: no cover - exercised without River
        raise ImportError(
            "as_river needs River: pip install river (or 'skalgos[online]')."
        ) from exc

    class RiverRegressor(_RegressorMixin, base.Regressor):
        __doc__ = _DOC.format(kind="Regressor", kind_lower="regressor")

    class RiverClassifier(_ClassifierMixin, base.Classifier):
        __doc__ = (
            _DOC.format(kind="Classifier", kind_lower="classifier")
            + """    classes : list of two labels, default=None
        The binary labels; boolean labels are recognised without it.
"""
        )

    for cls in (RiverRegressor, RiverClassifier):
        cls.__module__ = __name__
        cls.__qualname__ = cls.__name__
    return {"RiverRegressor": RiverRegressor, "RiverClassifier": RiverClassifier}


def __getattr__(name):
    # The River classes are made on first access (pickle finds them here).
    if name in _LAZY:
        return _river_classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def as_river(estimator, feature_names=None, *, track_questions=True, classes=None):
    """Wrap a skalgos delayed learner as a River estimator.

    Returns a ``RiverRegressor`` (a ``river.base.Regressor``) or, for a
    classifier, a ``RiverClassifier`` (a ``river.base.Classifier`` with
    ``predict_proba_one``), so that River's own tools drive it:
    ``river.evaluate.progressive_val_score(stream, as_river(est), metric,
    delay=d)`` plays exactly ``est.fit(X, y, delays=river_delay_to_skalgos(d))``
    (same online predictions; tested). Each ``predict_one`` is a question
    whose round stays pending until ``learn_one`` brings the label of the same
    features, and the learner then takes its gradient at the point it played
    for that question, as in ``fit``.

    The River classes are created the first time they are needed (River is
    an optional dependency: ``pip install 'skalgos[online]'``).

    Parameters
    ----------
    estimator : skalgos online learner
        Cloned when the first features arrive.
    feature_names : list, default=None
        The feature order; taken from the first dict seen if None.
    track_questions : bool, default=True
        False turns the protocol off: predictions leave the learner
        unchanged and every label is an undelayed update at the current
        weights (for serving predictions that will never be labelled).
    classes : list of two labels, default=None
        Classifiers only: the two labels (needed unless they are booleans).

    Returns
    -------
    model : RiverRegressor or RiverClassifier

    Notes
    -----
    Questions and answers are matched by feature values (oldest question
    first). Two identical rows pending at once whose labels arrive out of
    order are matched in question order; their gradients then come from
    the same features at each other's points.

    Examples
    --------
    >>> import pytest; river = pytest.importorskip("river")
    >>> from river import evaluate, metrics
    >>> from sklearn.datasets import make_regression
    >>> from skalgos.online import ClippedVAWRegressor, as_river
    >>> X, y = make_regression(300, 3, noise=1.0, random_state=0)
    >>> stream = [(dict(enumerate(row)), target) for row, target in zip(X, y)]
    >>> model = as_river(ClippedVAWRegressor(standardize=False))
    >>> isinstance(model, river.base.Regressor)
    True
    >>> score = evaluate.progressive_val_score(stream, model, metrics.MAE(), delay=5)
    >>> model.learner_.d_max_, model.learner_.n_observed_
    (4, 300)
    """
    if not hasattr(estimator, "_reset"):
        raise TypeError(
            "as_river wraps the delayed learners of skalgos.online (those with "
            f"fit(X, y, delays=...)); got {type(estimator).__name__}."
        )
    classes_ = _river_classes()
    if isinstance(estimator, ClassifierMixin):
        return classes_["RiverClassifier"](
            estimator, feature_names, track_questions, classes
        )
    if classes is not None:
        raise ValueError("classes is for classifiers; this learner is a regressor.")
    return classes_["RiverRegressor"](estimator, feature_names, track_questions)
