"""The registry of optimizer names used by TorchClassifier / TorchRegressor.

Every entry is a *factory* ``factory(module, lr, **optimizer_kwargs) ->
torch.optim.Optimizer``: it gets the whole module, not only its parameters,
because some optimizers (Muon's param-group split, KFAC, SyMO) need the
layers. A new optimizer plugs in with one line::

    register_optimizer("sam", lambda module, lr, **kw: SAM(module.parameters(),
                                                           lr=lr, **kw))

or, for a plain ``Optimizer(params, lr=..., **kw)`` class, just
``register_optimizer("sam", SAM)``.

The estimators' fit loop reads two class attributes of the built optimizer:

``requires_closure`` (default False)
    ``step(closure)`` must be given the closure, which the optimizer may call
    several times (SAM-like). The loop always passes a closure to optimizers
    whose ``step`` accepts one; with this flag the loop also relies on the
    optimizer to call it (it never runs the closure itself first).
``requires_mode_switch`` (default: whether it has ``train``/``eval``)
    Schedule-free style: the loop calls ``optimizer.train()`` before training
    steps and ``optimizer.eval()`` before validation, prediction and at the
    end of ``fit``, and recalibrates BatchNorm statistics after ``eval()``.
"""

import inspect
import numbers
import warnings

import torch

from ._muon import Muon, MuonWithAuxAdamW, muon_param_groups
from ._schedulefree import AdamWScheduleFree, SGDScheduleFree

__all__ = [
    "available_optimizers",
    "build_optimizer",
    "default_lr",
    "get_optimizer",
    "optimizer_flags",
    "register_optimizer",
]

_OPTIMIZERS = {}
_DEFAULTS = {}  # name -> {"lr": float, "module_kwargs": dict}


def _from_class(cls):
    def factory(module, lr, **kwargs):
        return cls(module.parameters(), lr=lr, **kwargs)

    factory.optimizer_class = cls
    factory.__name__ = f"{cls.__name__}_factory"
    return factory


def register_optimizer(
    name,
    factory,
    *,
    default_lr=None,
    regression_lr=None,
    module_kwargs=None,
    overwrite=False,
):
    """Register an optimizer under ``name`` for the estimators' ``optimizer``.

    Parameters
    ----------
    name : str
        Lower-case name, e.g. ``"sam"``.
    factory : callable or torch.optim.Optimizer subclass
        ``factory(module, lr, **optimizer_kwargs)`` returning an optimizer,
        or an optimizer class called as ``cls(module.parameters(), lr=lr,
        **optimizer_kwargs)``.
    default_lr : float or None, default=None
        The rate ``lr="auto"`` resolves to for this name; None resolves to
        1e-3 (AdamW's default).
    regression_lr : float or None, default=None
        The rate ``lr="auto"`` resolves to in :class:`~skalgos.torch.TorchRegressor`
        (a squared loss on a standardised target), where it differs from
        ``default_lr``; None uses ``default_lr``.
    module_kwargs : dict or None, default=None
        Defaults of the estimators' built-in :class:`~skalgos.torch.MLP`
        (``module=None``) for this optimizer, e.g. ``{"bias": False}`` for
        an optimizer that covers bias-free MLPs only; ``module__*``
        parameters override them.
    overwrite : bool, default=False
        Replace an existing entry instead of raising.

    Returns
    -------
    factory : callable
        The stored factory (so this can be used as a decorator on a factory
        function: ``@register_optimizer("name")`` is not supported; call it).
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"Optimizer names are non-empty strings; got {name!r}.")
    if name in _OPTIMIZERS and not overwrite:
        raise ValueError(
            f"An optimizer named {name!r} is already registered; pass "
            "overwrite=True to replace it."
        )
    if isinstance(factory, type) and issubclass(factory, torch.optim.Optimizer):
        factory = _from_class(factory)
    if not callable(factory):
        raise TypeError(f"factory must be callable; got {factory!r}.")
    if default_lr is not None and not (
        isinstance(default_lr, numbers.Real) and default_lr > 0
    ):
        raise ValueError(f"default_lr must be a float > 0; got {default_lr!r}.")
    if regression_lr is not None and not (
        isinstance(regression_lr, numbers.Real) and regression_lr > 0
    ):
        raise ValueError(f"regression_lr must be a float > 0; got {regression_lr!r}.")
    lr = 1e-3 if default_lr is None else float(default_lr)
    _OPTIMIZERS[name] = factory
    _DEFAULTS[name] = {
        "lr": lr,
        "regression_lr": lr if regression_lr is None else float(regression_lr),
        "module_kwargs": dict(module_kwargs or {}),
    }
    return factory


def default_lr(optimizer, task="classification"):
    """The learning rate ``lr="auto"`` resolves to for ``optimizer``.

    A registered name gives its measured default (see the user guide's
    table); a class or factory gives 1e-3.

    Parameters
    ----------
    optimizer : str, class or callable
    task : {"classification", "regression"}, default="classification"
        ``"regression"`` is the rate :class:`~skalgos.torch.TorchRegressor`
        uses (smaller for the plain-SGD-based names, whose classification
        rates diverge on a squared loss).

    Examples
    --------
    >>> from skalgos.torch.optim import default_lr
    >>> default_lr("adamw")
    0.003
    """
    if task not in ("classification", "regression"):
        raise ValueError(
            f"task must be 'classification' or 'regression'; got {task!r}."
        )
    if isinstance(optimizer, str):
        get_optimizer(optimizer)
        key = "regression_lr" if task == "regression" else "lr"
        return _DEFAULTS[optimizer][key]
    return 1e-3


def default_module_kwargs(optimizer):
    """The built-in MLP's defaults registered for ``optimizer`` (a copy)."""
    if isinstance(optimizer, str) and optimizer in _DEFAULTS:
        return dict(_DEFAULTS[optimizer]["module_kwargs"])
    return {}


def available_optimizers():
    """Sorted list of registered optimizer names.

    Examples
    --------
    >>> from skalgos.torch.optim import available_optimizers
    >>> available_optimizers()
    ['adamw', 'adamw_sf', 'kfac', 'muon', 'sam', 'sgd', 'sgd_sf', 'shampoo', 'symo', 'tsam']
    """
    return sorted(_OPTIMIZERS)


def get_optimizer(name):
    """The factory registered under ``name`` (clear error if unknown)."""
    try:
        return _OPTIMIZERS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"Unknown optimizer {name!r}. Registered names: "
            f"{available_optimizers()}; or pass a torch.optim.Optimizer subclass, "
            "or register one with skalgos.torch.optim.register_optimizer."
        ) from None


def build_optimizer(optimizer, module, lr, **kwargs):
    """Build an optimizer from a registered name, a class or a factory.

    Parameters
    ----------
    optimizer : str, torch.optim.Optimizer subclass or callable
    module : torch.nn.Module
    lr : float
    **kwargs
        Passed to the factory (the estimators' ``optimizer__*`` params).
    """
    if isinstance(optimizer, str):
        factory = get_optimizer(optimizer)
    elif isinstance(optimizer, type) and issubclass(optimizer, torch.optim.Optimizer):
        factory = _from_class(optimizer)
    elif callable(optimizer):
        factory = optimizer
    else:
        raise TypeError(
            "optimizer must be a registered name, a torch.optim.Optimizer subclass "
            f"or a factory(module, lr, **kw); got {optimizer!r}."
        )
    return factory(module, lr, **kwargs)


def optimizer_flags(opt):
    """``(requires_closure, requires_mode_switch, accepts_closure)`` of ``opt``."""
    requires_closure = bool(getattr(opt, "requires_closure", False))
    has_modes = callable(getattr(opt, "train", None)) and callable(
        getattr(opt, "eval", None)
    )
    requires_mode_switch = bool(getattr(opt, "requires_mode_switch", has_modes))
    try:
        accepts_closure = "closure" in inspect.signature(opt.step).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without signature
        accepts_closure = True
    return requires_closure, requires_mode_switch, accepts_closure


def _muon_factory(module, lr, **kwargs):
    """``"muon"``: Muon on the matrices, AdamW on the rest.

    ``lr`` is Muon's rate; ``adamw_lr`` (default 3e-3) and the other
    :func:`muon_param_groups` arguments may be given as ``optimizer__*``;
    the remaining keywords go to :class:`MuonWithAuxAdamW`. Unlike
    :func:`muon_param_groups`, ``first_layer`` defaults to ``"muon"``: the
    reference excludes the first layer of ConvNets, but the input layer of
    an MLP on tabular features is an ordinary dense matrix, and excluding it
    would leave a one-hidden-layer MLP without any Muon parameter. With
    ``modular=True`` every layer is dualized by its own norm (no AdamW).
    """
    split = set(inspect.signature(muon_param_groups).parameters) - {"module"}
    group_kw = {k: kwargs.pop(k) for k in list(kwargs) if k in split}
    group_kw.setdefault("first_layer", "muon")
    groups = muon_param_groups(module, muon_lr=lr, **group_kw)
    n_muon = sum(len(g["params"]) for g in groups if g["use_muon"])
    if n_muon == 0:
        warnings.warn(
            "optimizer='muon' found no parameter for Muon in this module (Muon takes "
            "the hidden weight matrices; e.g. module__hidden_sizes=() leaves only "
            "the output layer, which goes to AdamW), so lr has no effect: every "
            "parameter is trained by the auxiliary AdamW at optimizer__adamw_lr. "
            "Add a hidden layer or use optimizer='adamw'.",
            UserWarning,
            stacklevel=3,
        )
    if group_kw.get("modular"):
        return Muon(groups, lr=lr, **kwargs)
    return MuonWithAuxAdamW(groups, **kwargs)


# Default learning rates (lr="auto") and settings, measured on standardised
# wine, breast cancer and digits with the estimators' defaults (MLP (64,),
# 20 epochs, batch 64), 2 seeds: the lr with the best mean test accuracy on
# the grid, the smaller one when two are within 0.5 points. The sweep is
# ``python benchmarks/torch_optim.py --defaults`` (results/torch_optim_defaults.md).
# regression_lr: TorchRegressor's rate (standardised target, max_epochs="auto"),
# measured on diabetes, HousePrices, Auto, Boston and Salaries (test R^2, seed
# 0): at their classification rates sam / tsam (0.3) and sgd_sf (1.0) diverge
# or reach R^2 of -1e4 to -1e16 on some of them (sgd at 0.3 too). Among the
# grid rates (0.03, 0.1, 0.3, 1) stable on all five tables, the one whose
# largest shortfall from the best stable rate is smallest: sgd 0.03 (0.06),
# sam 0.1 (0.01), tsam 0.03 (0.00), sgd_sf 0.3 (0.01).
register_optimizer("sgd", torch.optim.SGD, default_lr=0.1, regression_lr=0.03)
register_optimizer("adamw", torch.optim.AdamW, default_lr=3e-3)
register_optimizer("muon", _muon_factory, default_lr=0.01)
register_optimizer("sgd_sf", SGDScheduleFree, default_lr=1.0, regression_lr=0.3)
register_optimizer("adamw_sf", AdamWScheduleFree, default_lr=1e-2)


from ._layerwise import LayerwisePreconditioner  # noqa: E402
from ._sam import SAM, TiltedSAM  # noqa: E402
from ._symo import SyMO  # noqa: E402


def _warn_if_nothing_preconditioned(name, opt):
    """Warn when no layer of the module is preconditioned (all plain SGD)."""
    if not opt._layers:
        warnings.warn(
            f"optimizer={name!r} found no nn.Linear or nn.Conv2d layer to "
            "precondition in this module (other layers, e.g. Embedding, Conv1d, "
            "take plain SGD steps), so every parameter is trained by plain SGD "
            "at lr. Use optimizer='adamw' or 'sgd' for this module.",
            UserWarning,
            stacklevel=3,
        )
    return opt


def _kfac_factory(module, lr, **kwargs):
    """``"kfac"``: :class:`LayerwisePreconditioner`, damping 0.1 by default.

    The class's damping (1e-3) suits its least-squares oracle; with the
    empirical Fisher of a classifier the gradients, hence the factors,
    shrink as the fit improves, and 1e-3 lets the steps blow up (digits:
    8% accuracy at every lr we tried), while 0.1 trains at lr 0.01 to 0.1.
    """
    kwargs.setdefault("damping", 0.1)
    return _warn_if_nothing_preconditioned(
        "kfac", LayerwisePreconditioner(module, lr=lr, **kwargs)
    )


def _shampoo_factory(module, lr, **kwargs):
    """``"shampoo"``: :class:`LayerwisePreconditioner` (``mode="shampoo"``).

    ``epsilon`` defaults to 1e-4 here (the class's 1e-12 lets directions the
    gradients no longer excite be amplified: digits reached 30% at best).
    """
    kwargs.setdefault("epsilon", 1e-4)
    return _warn_if_nothing_preconditioned(
        "shampoo",
        LayerwisePreconditioner(module, lr=lr, **{"mode": "shampoo", **kwargs}),
    )


register_optimizer("sam", SAM, default_lr=0.3, regression_lr=0.1)
register_optimizer("tsam", TiltedSAM, default_lr=0.3, regression_lr=0.03)
register_optimizer("kfac", _kfac_factory, default_lr=0.01)
register_optimizer("shampoo", _shampoo_factory, default_lr=0.01)
register_optimizer(
    "symo",
    lambda m, lr, **kw: SyMO(m, lr=lr, **kw),
    default_lr=0.03,
    # SyMO covers bias-free MLPs (the paper's tanh notebooks)
    module_kwargs={"bias": False, "activation": "tanh"},
)
