"""The paper's prequential model for representational compositionality."""

from ._estimators import TorchClassifier, TorchRegressor

__all__ = ["prequential_mlp"]


def prequential_mlp(
    kind="classifier",
    *,
    hidden_sizes=(64, 256, 256, 256),
    lr=1e-3,
    batch_size=50,
    random_state=None,
):
    """A torch MLP configured as the prequential model of Elmoznino et al.

    The paper codes ``Z`` given the sentences with a word embedding of width
    64 followed by a 3-layer MLP of width 256, trained with Adam at 1e-3 in
    batches of 50. With ``W`` one-hot encoded per position (as
    :func:`skalgos.metrics.prequential_code_length` does), the first linear
    layer of width 64 is that embedding (concatenated over positions).

    Parameters
    ----------
    kind : {"classifier", "regressor"}, default="classifier"
        Classifier for discrete Z (one per column), regressor for continuous Z.
    hidden_sizes : tuple of int, default=(64, 256, 256, 256)
    lr : float, default=1e-3
    batch_size : int, default=50
    random_state : int or None, default=None

    Returns
    -------
    estimator : TorchClassifier or TorchRegressor
        Trained one epoch per ``partial_fit`` call, so the prequential coder
        stops early on the validation code length, epoch by epoch.

    Notes
    -----
    The optimizer is AdamW with zero weight decay, which is Adam.

    Examples
    --------
    >>> from skalgos.datasets import make_object_language
    >>> from skalgos.metrics import RepresentationalCompositionality
    >>> from skalgos.torch import prequential_mlp
    >>> W, Z = make_object_language(2, 3, 8, random_state=0)
    >>> est = prequential_mlp(hidden_sizes=(16,), lr=1e-2, random_state=0)
    >>> rc = RepresentationalCompositionality(est, min_size=12, increment=24,
    ...                                       max_epochs=10, random_state=0)
    >>> bool(rc.fit(W, Z).compositionality_ >= 1)
    True
    """
    if kind not in ("classifier", "regressor"):
        raise ValueError(f"kind must be 'classifier' or 'regressor'; got {kind!r}.")
    cls = TorchClassifier if kind == "classifier" else TorchRegressor
    return cls(
        optimizer="adamw",
        lr=lr,
        batch_size=batch_size,
        max_epochs=1,
        optimizer__weight_decay=0.0,
        module__hidden_sizes=tuple(hidden_sizes),
        random_state=random_state,
    )
