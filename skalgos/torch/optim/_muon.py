"""Muon: momentum orthogonalized by Newton-Schulz, and its AdamW companion."""

import math
from fnmatch import fnmatch

import torch
from torch import nn

from .. import linalg

__all__ = ["Muon", "MuonWithAuxAdamW", "muon_param_groups"]

_KINDS = (None, "linear", "embed", "conv2d", "vector")


def _adjusted_lr(lr, adjust_lr_fn, shape):
    """Per-matrix learning rate from the (rows, cols) of the update matrix."""
    A, B = shape
    if adjust_lr_fn in (None, "original"):
        return lr * math.sqrt(max(1.0, A / B))
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * lr * math.sqrt(max(A, B))
    raise ValueError(
        f"adjust_lr_fn must be None, 'original' or 'match_rms_adamw'; got "
        f"{adjust_lr_fn!r}."
    )


def _world():
    """(rank, world_size, initialized) of the default torch.distributed group."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size(), True
    return 0, 1, False


class Muon(torch.optim.Optimizer):
    """Muon: SGD-momentum whose update is orthogonalized by Newton-Schulz.

    Per parameter matrix :math:`W` with gradient :math:`g`:
    :math:`m \\leftarrow \\beta m + (1-\\beta) g`; the update direction is
    :math:`u = (1-\\beta) g + \\beta m` (Nesterov) or :math:`m`;
    :math:`O = \\mathrm{NS}_5(u)`; and
    :math:`W \\leftarrow (1 - \\eta\\lambda) W - \\eta' O` with the
    shape-adjusted rate :math:`\\eta'`. This is steepest descent under the
    RMS->RMS operator norm of a linear layer (modular duality).

    Argument names follow :class:`torch.optim.Muon`, so code can switch
    between the two; the defaults follow the reference implementation
    (``lr=0.02``, ``weight_decay=0``) rather than torch's (1e-3, 0.1).

    Parameters
    ----------
    params : iterable of tensors or dicts
        Parameters or param groups. Without ``modular=True`` every parameter
        must be 2-D, or 4-D (a conv filter, see ``conv_mode``); route 1-D
        parameters, embeddings and heads elsewhere with
        :func:`muon_param_groups` and :class:`MuonWithAuxAdamW`.
    lr : float, default=0.02
        Learning rate, in the units of the spectral norm.
    weight_decay : float, default=0.0
        Decoupled weight decay, multiplied by the unadjusted ``lr``.
    momentum : float, default=0.95
    nesterov : bool, default=True
    ns_coefficients : tuple of 3 floats, default=(3.4445, -4.775, 2.0315)
    eps : float, default=1e-7
    ns_steps : int, default=5
    adjust_lr_fn : {None, "original", "match_rms_adamw"}, default=None
        ``None``/``"original"``: :math:`\\eta' = \\eta\\sqrt{\\max(1, A/B)}`
        for an update of shape (A, B); ``"match_rms_adamw"``:
        :math:`\\eta' = 0.2\\,\\eta\\sqrt{\\max(A, B)}` (reuse AdamW's lr).
    conv_mode : {"flatten", "per_slice"}, default="flatten"
        4-D filters: orthogonalize the (out, in*k*k) view (Muon), or each
        spatial slice separately (the paper's Conv2D map).
    ns_dtype : "auto", torch.dtype or None, default="auto"
        Newton-Schulz working dtype. ``"auto"``: bfloat16 on CUDA; on a CPU,
        bfloat16 only where a one-off cached probe measures it faster than
        float32 (:func:`skalgos.torch.linalg.fast_ns_dtype`), else float32.
        ``None`` is float32 on CPU, bfloat16 on CUDA. ``torch.bfloat16``
        reproduces :class:`torch.optim.Muon`.
    orthogonalizer : {"newton_schulz", "svd"}, default="newton_schulz"
        ``"svd"`` uses the exact polar factor (a slow reference mode).
    modular : bool, default=False
        Dualize every parameter by its own layer's norm (param-group key
        ``kind`` in {"linear", "embed", "conv2d", "vector"}; inferred from
        the shape when absent), as modular duality proposes, instead of
        requiring 2-D parameters. The duality map already carries the
        :math:`\\sqrt{d_{out}/d_{in}}` scale, so ``adjust_lr_fn`` is unused.
    distributed : {"auto", True, False}, default="auto"
        Under an initialized :mod:`torch.distributed` group of world size
        > 1, each rank orthogonalizes its share of the matrices and one
        ``all_gather`` exchanges the results. Gradients must already be
        identical across ranks (e.g. after DDP's all-reduce) and every rank
        must hold the same parameters in the same order.

    Notes
    -----
    Differences from :class:`torch.optim.Muon`, all ours: float32
    Newton-Schulz on a CPU unless a probe shows bfloat16 faster there
    (torch always casts to bfloat16, which is far slower on CPUs without
    bfloat16 matrix units, 84x on one 1024 x 1024 step, but about 3x faster
    on CPUs with AMX); 4-D filters are accepted and their lr is
    adjusted from the flattened (out, in*k*k) shape (the reference computes
    it from the kernel dims, a known bug); the modular and distributed modes.
    Gradients are never modified in place. Parameters without a gradient are
    skipped (no decay, no momentum).

    References
    ----------
    .. [1] Bernstein, J. and Newhouse, L. "Modular Duality in Deep Learning",
       ICML 2025. arXiv:2410.21265.
    .. [2] Jordan, K. et al. "Muon: An optimizer for hidden layers in neural
       networks", 2024.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.optim import Muon
    >>> W = torch.nn.Parameter(torch.zeros(4, 3))
    >>> opt = Muon([W], lr=0.1)
    >>> W.grad = torch.ones(4, 3)
    >>> _ = opt.step()
    >>> W.shape, bool(W.detach().abs().max() < 0.2)
    (torch.Size([4, 3]), True)
    """

    requires_closure = False
    requires_mode_switch = False

    def __init__(
        self,
        params,
        lr=0.02,
        weight_decay=0.0,
        momentum=0.95,
        nesterov=True,
        ns_coefficients=(3.4445, -4.775, 2.0315),
        eps=1e-7,
        ns_steps=5,
        adjust_lr_fn=None,
        *,
        conv_mode="flatten",
        ns_dtype="auto",
        orthogonalizer="newton_schulz",
        modular=False,
        distributed="auto",
    ):
        if not lr >= 0.0:
            raise ValueError(f"Muon: lr must be >= 0; got {lr}.")
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"Muon: momentum must be in [0, 1); got {momentum}.")
        if not weight_decay >= 0.0:
            raise ValueError(f"Muon: weight_decay must be >= 0; got {weight_decay}.")
        if not 0 < int(ns_steps) < 100:
            raise ValueError(f"Muon: ns_steps must be in [1, 99]; got {ns_steps}.")
        if adjust_lr_fn not in (None, "original", "match_rms_adamw"):
            raise ValueError(
                "Muon: adjust_lr_fn must be None, 'original' or 'match_rms_adamw'; "
                f"got {adjust_lr_fn!r}."
            )
        if conv_mode not in ("flatten", "per_slice"):
            raise ValueError(
                f"Muon: conv_mode must be 'flatten' or 'per_slice'; got {conv_mode!r}."
            )
        if orthogonalizer not in ("newton_schulz", "svd"):
            raise ValueError(
                "Muon: orthogonalizer must be 'newton_schulz' or 'svd'; got "
                f"{orthogonalizer!r}."
            )
        if not (
            ns_dtype is None
            or isinstance(ns_dtype, torch.dtype)
            or (isinstance(ns_dtype, str) and ns_dtype == "auto")
        ):
            raise ValueError(
                f"Muon: ns_dtype must be 'auto', None or a torch.dtype; got {ns_dtype!r}."
            )
        if distributed not in ("auto", True, False):
            raise ValueError(
                f"Muon: distributed must be 'auto', True or False; got {distributed!r}."
            )
        defaults = dict(
            lr=lr,
            weight_decay=weight_decay,
            momentum=momentum,
            nesterov=nesterov,
            ns_coefficients=tuple(ns_coefficients),
            eps=eps,
            ns_steps=int(ns_steps),
            adjust_lr_fn=adjust_lr_fn,
            conv_mode=conv_mode,
            ns_dtype=ns_dtype,
            orthogonalizer=orthogonalizer,
            modular=modular,
            kind=None,
        )
        self.distributed = distributed
        super().__init__(params, defaults)
        for group in self.param_groups:
            self._check_group(group)

    def __getstate__(self):
        # torch's Optimizer pickles only defaults, state and param_groups.
        state = super().__getstate__()
        state["distributed"] = self.distributed
        return state

    def __setstate__(self, state):
        self.distributed = state.pop("distributed", "auto")
        super().__setstate__(state)

    # -- validation -------------------------------------------------------
    def _is_muon_group(self, group):
        return True

    def _check_group(self, group):
        if not self._is_muon_group(group):
            return
        kind = group.get("kind")
        if kind not in _KINDS:
            raise ValueError(
                f"Muon: param group kind must be one of {_KINDS[1:]}; got {kind!r}."
            )
        for p in group["params"]:
            if p.is_complex() or p.is_sparse:
                raise ValueError("Muon does not support complex or sparse parameters.")
            if group["modular"]:
                continue
            if p.ndim not in (2, 4) or kind in ("embed", "vector"):
                raise ValueError(
                    f"Muon got a parameter of shape {tuple(p.shape)}"
                    + (f" of kind {kind!r}" if kind else "")
                    + ". Muon orthogonalizes 2-D matrices (and 4-D conv filters); "
                    "give 1-D parameters, embeddings and the output layer to AdamW "
                    "with MuonWithAuxAdamW(muon_param_groups(module)), or use "
                    "Muon(..., modular=True) to dualize every layer by its own norm."
                )

    # -- the update -------------------------------------------------------
    def _ns_kwargs(self, group):
        return dict(
            steps=group["ns_steps"],
            coefficients=group["ns_coefficients"],
            eps=group["eps"],
            dtype=group["ns_dtype"],
        )

    def _direction(self, group, p, u):
        """The dualized update for parameter ``p`` from momentum direction ``u``."""
        method = group["orthogonalizer"]
        ns = self._ns_kwargs(group)
        if group["modular"]:
            kind = group.get("kind") or {1: "vector", 2: "linear", 4: "conv2d"}.get(
                p.ndim
            )
            if kind == "linear":
                return linalg.dualize_linear(u, method=method, **ns)
            if kind == "conv2d":
                return linalg.dualize_conv2d(
                    u, mode=group["conv_mode"], method=method, **ns
                )
            if kind == "embed":
                return linalg.dualize_embed(u)
            if kind == "vector" or p.ndim == 1:
                return linalg.dualize_vector(u)
            raise ValueError(
                f"Muon(modular=True): cannot infer the layer of a parameter of "
                f"shape {tuple(p.shape)}; set the param group's 'kind'."
            )
        lr_scale = _adjusted_lr(1.0, group["adjust_lr_fn"], self._matrix_shape(p))
        if p.ndim == 4 and group["conv_mode"] == "per_slice":
            slices = u.permute(2, 3, 0, 1)
            O = linalg._orthogonalize(slices, method, **ns).permute(2, 3, 0, 1)
        else:
            O = linalg._orthogonalize(u.reshape(p.shape[0], -1), method, **ns)
        return O.reshape(p.shape) * lr_scale

    @staticmethod
    def _matrix_shape(p):
        if p.ndim == 4:
            return (p.shape[0], p.shape[1] * p.shape[2] * p.shape[3])
        return tuple(p.shape)

    def _momentum_direction(self, group, p):
        state = self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = torch.zeros_like(p)
        buf = state["momentum_buffer"]
        beta = group["momentum"]
        buf.lerp_(p.grad, 1 - beta)
        return p.grad.lerp(buf, beta) if group["nesterov"] else buf.clone()

    def _muon_items(self):
        items = []
        for group in self.param_groups:
            if not self._is_muon_group(group):
                continue
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise ValueError("Muon does not support sparse gradients.")
                items.append((group, p))
        return items

    def _muon_step(self):
        items = self._muon_items()
        directions = [self._momentum_direction(g, p) for g, p in items]
        rank, world, initialized = _world()
        use_dist = initialized and world > 1 and self.distributed in ("auto", True)
        if self.distributed is True and not initialized:
            raise RuntimeError(
                "Muon(distributed=True) needs an initialized torch.distributed "
                "process group."
            )
        if not use_dist:
            updates = [self._direction(g, p, u) for (g, p), u in zip(items, directions)]
        else:
            updates = self._distributed_directions(items, directions, rank, world)
        with torch.no_grad():
            for (group, p), O in zip(items, updates):
                lr = group["lr"]
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(O.to(p.dtype), alpha=-lr)

    def _distributed_directions(self, items, directions, rank, world):
        """Round-robin the matrices over ranks, then one all_gather."""
        dist = torch.distributed
        numels = [p.numel() for _, p in items]
        owner = [i % world for i in range(len(items))]
        per_rank = [
            sum(n for n, o in zip(numels, owner) if o == r) for r in range(world)
        ]
        width = max(per_rank) if per_rank else 0
        ref = items[0][1] if items else None
        if ref is None:
            return []
        dtype = torch.promote_types(ref.dtype, torch.float32)
        mine = torch.zeros(width, dtype=dtype, device=ref.device)
        offset = 0
        for i, ((group, p), u) in enumerate(zip(items, directions)):
            if owner[i] != rank:
                continue
            O = self._direction(group, p, u)
            mine[offset : offset + numels[i]] = O.reshape(-1).to(dtype)
            offset += numels[i]
        gathered = [torch.empty_like(mine) for _ in range(world)]
        dist.all_gather(gathered, mine)
        offsets = [0] * world
        updates = []
        for i, (_, p) in enumerate(items):
            r = owner[i]
            flat = gathered[r][offsets[r] : offsets[r] + numels[i]]
            offsets[r] += numels[i]
            updates.append(flat.reshape(p.shape))
        return updates

    @torch.no_grad()
    def step(self, closure=None):
        """Perform one update; ``closure`` (optional) recomputes the loss."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._muon_step()
        return loss


class MuonWithAuxAdamW(Muon):
    """Muon for the hidden matrices, AdamW for every other parameter.

    Parameters
    ----------
    param_groups : list of dict
        Each group has ``use_muon`` (bool) and its hyperparameters, as built
        by :func:`muon_param_groups`. Muon groups default to ``lr=0.02``,
        ``momentum=0.95``, ``weight_decay=0`` and take every :class:`Muon`
        option; AdamW groups default to ``lr=3e-4``, ``betas=(0.9, 0.95)``,
        ``eps=1e-10``, ``weight_decay=0`` (the reference's defaults).
    **muon_kwargs
        Defaults for the Muon groups (any :class:`Muon` argument).

    Notes
    -----
    The AdamW part is ours, written from the AdamW update (decoupled decay,
    bias-corrected moments); it matches :class:`torch.optim.AdamW`.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.optim import MuonWithAuxAdamW, muon_param_groups
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(),
    ...                           torch.nn.Linear(8, 8), torch.nn.ReLU(),
    ...                           torch.nn.Linear(8, 2))
    >>> groups = muon_param_groups(net)
    >>> [(len(g["params"]), g["use_muon"]) for g in groups]
    [(1, True), (5, False)]
    >>> opt = MuonWithAuxAdamW(groups)
    """

    def __init__(self, param_groups, **muon_kwargs):
        param_groups = list(param_groups)
        if not param_groups or not all(isinstance(g, dict) for g in param_groups):
            raise ValueError(
                "MuonWithAuxAdamW needs a list of param-group dicts, each with "
                "'use_muon'; build them with muon_param_groups(module)."
            )
        groups = []
        for g in param_groups:
            if "use_muon" not in g:
                raise ValueError(
                    "MuonWithAuxAdamW: every param group needs 'use_muon' (True/False)."
                )
            g = dict(g)
            if not g["use_muon"]:
                g.setdefault("lr", 3e-4)
                g.setdefault("betas", (0.9, 0.95))
                g.setdefault("eps", 1e-10)
                g.setdefault("weight_decay", 0.0)
            groups.append(g)
        super().__init__(groups, **muon_kwargs)

    def _is_muon_group(self, group):
        return bool(group.get("use_muon", True))

    @torch.no_grad()
    def _adamw_step(self):
        for group in self.param_groups:
            if self._is_muon_group(group):
                continue
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "step" not in state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                state["step"] += 1
                t = state["step"]
                g = p.grad
                state["exp_avg"].lerp_(g, 1 - beta1)
                state["exp_avg_sq"].mul_(beta2).addcmul_(g, g, value=1 - beta2)
                bc1 = 1 - beta1**t
                bc2 = 1 - beta2**t
                denom = (state["exp_avg_sq"] / bc2).sqrt_().add_(eps)
                p.mul_(1 - lr * wd)
                p.addcdiv_(state["exp_avg"], denom, value=-lr / bc1)

    @torch.no_grad()
    def step(self, closure=None):
        """Perform one update; ``closure`` (optional) recomputes the loss."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._muon_step()
        self._adamw_step()
        return loss


def _layer_kind(module):
    if isinstance(module, nn.Embedding):
        return "embed"
    if isinstance(module, nn.Conv2d):
        return "conv2d"
    if isinstance(module, nn.Linear):
        return "linear"
    return None


def muon_param_groups(
    module,
    *,
    exclude=("embed", "head", "lm_head", "classifier"),
    first_layer="adamw",
    last_layer="adamw",
    muon_lr=0.02,
    adamw_lr=3e-3,
    muon_weight_decay=0.0,
    adamw_weight_decay=0.0,
    adamw_betas=(0.9, 0.95),
    adamw_eps=1e-10,
    modular=False,
    **muon_kwargs,
):
    """Split a module's parameters into Muon and AdamW param groups.

    AdamW gets every parameter that is not 2-D or 4-D (biases, norm gains),
    every ``nn.Embedding``, every parameter whose name matches ``exclude``,
    the first layer (``first_layer="adamw"``: the first Linear/Conv2d in
    module order, as the Muon README advises for ConvNets) and the output
    layer (``last_layer="adamw"``: the last Linear in module order). Muon gets
    the other matrices.

    Parameters
    ----------
    module : torch.nn.Module
    exclude : tuple of str, default=("embed", "head", "lm_head", "classifier")
        Name patterns: a parameter goes to AdamW when a pattern matches a
        component of its dotted name (fnmatch syntax, e.g. ``"head*"``).
    first_layer, last_layer : {"adamw", "muon"}, default="adamw"
    muon_lr, adamw_lr : float, default=0.02, 3e-3
    muon_weight_decay, adamw_weight_decay : float, default=0.0
    adamw_betas : tuple, default=(0.9, 0.95)
    adamw_eps : float, default=1e-10
    modular : bool, default=False
        Put every parameter in Muon groups tagged with its layer ``kind``
        ("linear", "embed", "conv2d", "vector"), for ``Muon(modular=True)``;
        no AdamW group is made.
    **muon_kwargs
        Extra options stored in the Muon groups (e.g. ``momentum``).

    Returns
    -------
    groups : list of dict
        Empty groups are dropped. Each has ``use_muon``.
    """
    for name, value in (("first_layer", first_layer), ("last_layer", last_layer)):
        if value not in ("adamw", "muon"):
            raise ValueError(f"{name} must be 'adamw' or 'muon'; got {value!r}.")
    layers = [
        (name, m) for name, m in module.named_modules() if _layer_kind(m) is not None
    ]
    matrices = [(n, m) for n, m in layers if _layer_kind(m) in ("linear", "conv2d")]
    first = matrices[0][1] if matrices else None
    linears = [m for _, m in layers if _layer_kind(m) == "linear"]
    last = linears[-1] if linears else None
    owner = {}
    for _, m in layers:
        for p in m.parameters(recurse=False):
            owner.setdefault(id(p), m)

    muon, adamw = [], []
    kinds = {}
    for name, p in module.named_parameters():
        if not p.requires_grad:
            continue
        m = owner.get(id(p))
        kind = _layer_kind(m) if m is not None else None
        if p.ndim == 1:
            kind = "vector"
        if modular:
            kinds.setdefault(kind or {2: "linear", 4: "conv2d"}.get(p.ndim), []).append(
                p
            )
            continue
        parts = name.split(".")
        to_adamw = (
            p.ndim not in (2, 4)
            or kind == "embed"
            or any(fnmatch(part, pat) for part in parts for pat in exclude)
            or (m is not None and m is first and first_layer == "adamw")
            or (m is not None and m is last and last_layer == "adamw")
        )
        (adamw if to_adamw else muon).append(p)

    muon_group = dict(
        use_muon=True, lr=muon_lr, weight_decay=muon_weight_decay, **muon_kwargs
    )
    if modular:
        groups = []
        for kind, params in kinds.items():
            if kind is None:
                raise ValueError(
                    "muon_param_groups(modular=True): cannot tell the layer of some "
                    "parameters; build the groups by hand with a 'kind' each."
                )
            groups.append(dict(muon_group, params=params, kind=kind, modular=True))
        return groups
    groups = []
    if muon:
        groups.append(dict(muon_group, params=muon))
    if adamw:
        groups.append(
            dict(
                params=adamw,
                use_muon=False,
                lr=adamw_lr,
                betas=tuple(adamw_betas),
                eps=adamw_eps,
                weight_decay=adamw_weight_decay,
            )
        )
    return groups
