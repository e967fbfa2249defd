"""An adapter that lets River's progressive validation drive our learners."""

import numpy as np
from sklearn.base import clone

__all__ = ["RiverAdapter", "as_river", "river_delay_to_skalgos"]


def river_delay_to_skalgos(delay):
    """Convert River's integer ``delay`` to skalgos' convention.

    River's ``progressive_val_score(..., delay=d)`` reveals the label of row
    ``i`` just before question ``i + d`` (and treats ``d = 0`` like ``d = 1``);
    in skalgos ``d = 0`` already means "before the next prediction". So River's
    ``d`` is our ``max(d, 1) - 1``.

    Examples
    --------
    >>> from skalgos.online import river_delay_to_skalgos
    >>> [river_delay_to_skalgos(d) for d in (0, 1, 5)]
    [0, 0, 4]
    """
    return max(int(delay), 1) - 1


class RiverAdapter:
    """River-style ``learn_one`` / ``predict_one`` around a skalgos learner.

    River hands over one dict of features at a time and decides itself when
    a label arrives; each ``learn_one`` is one undelayed ``partial_fit`` row.

    Parameters
    ----------
    estimator : skalgos online learner
        Cloned on creation.
    feature_names : list of str, default=None
        The feature order; taken from the first dict seen if None.

    Notes
    -----
    River passes no record of the state a prediction was made with, so a
    gradient learner takes its gradient at its *current* weights when the
    label arrives, not at the weights it played (as ``fit(..., delays=...)``
    does). The clipped VAW forecaster, whose update needs only ``(x, y)``, is
    exactly the same under both.
    """

    def __init__(self, estimator, feature_names=None):
        self.estimator = clone(estimator)
        self.feature_names = None if feature_names is None else list(feature_names)

    def _row(self, x):
        if self.feature_names is None:
            self.feature_names = list(x)
        try:
            return np.array([[float(x[k]) for k in self.feature_names]])
        except KeyError as exc:
            raise ValueError(f"Feature {exc.args[0]!r} missing from x.") from None

    def predict_one(self, x):
        """Prediction for one dict of features (0.0 before any label)."""
        if not hasattr(self.estimator, "t_"):
            return 0.0
        return float(self.estimator.predict(self._row(x))[0])

    def learn_one(self, x, y):
        """Learn one labelled dict of features."""
        self.estimator.partial_fit(self._row(x), np.array([y]), delays=[0])
        return self


def as_river(estimator, feature_names=None):
    """Wrap ``estimator`` for River (see :class:`RiverAdapter`).

    Examples
    --------
    >>> from skalgos.online import ClippedVAWRegressor, as_river
    >>> model = as_river(ClippedVAWRegressor())
    >>> model = model.learn_one({"a": 1.0, "b": 0.0}, 2.0)
    >>> round(model.predict_one({"a": 1.0, "b": 0.0}), 3)
    0.667
    """
    return RiverAdapter(estimator, feature_names)
