"""Optional torch extra: optimizers and estimators that train torch modules.

Importing this subpackage requires torch; install it with
``pip install "skalgos[torch]"``.
"""

try:
    import torch as _torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "skalgos.torch needs PyTorch, which is an optional extra. Install it with "
        "`pip install 'skalgos[torch]'` (or `pip install torch`)."
    ) from exc

from . import callbacks, linalg, lr_scheduler, optim
from ._async import AsyncMiniBatch, DelaySimulator
from ._compositionality import prequential_mlp
from ._estimators import MLP, TorchClassifier, TorchRegressor
from ._sharpness import hessian_top_eigenvalue, hessian_trace, perturbed_sharpness

__all__ = [
    "AsyncMiniBatch",
    "DelaySimulator",
    "MLP",
    "TorchClassifier",
    "TorchRegressor",
    "hessian_top_eigenvalue",
    "hessian_trace",
    "perturbed_sharpness",
    "callbacks",
    "linalg",
    "lr_scheduler",
    "optim",
    "prequential_mlp",
]
