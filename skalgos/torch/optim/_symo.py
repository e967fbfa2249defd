"""SyMO: second-order steps with the symmetry structure of global curvature."""

import torch
from torch import nn

__all__ = ["SyMO", "StructuredCurvature"]


def _sym_fn(M, p, rtol=1e-10):
    """``M^p`` of a symmetric PSD matrix (pseudo-inverse for ``p < 0``)."""
    M = 0.5 * (M + M.T)
    w, V = torch.linalg.eigh(M)
    keep = w > rtol * max(float(w.max()), 0.0)
    f = torch.zeros_like(w)
    f[keep] = w[keep] ** p
    return (V * f) @ V.T


def _scalar_fn(x, p):
    x = float(x)
    return x**p if x > 0 else 0.0


class StructuredCurvature:
    r"""The symmetry-structured curvature of a bias-free MLP.

    Layers :math:`W_l \in \mathbb R^{d_l \times d_{l-1}}`, parameters
    flattened layer after layer in torch's row-major order. Blocks:
    ``(W_1, W_1) = I_{d_1} (x) Phi_in``, ``(W_l, W_l) = phi_l I`` for the
    hidden-to-hidden layers, ``(W_L, W_L) = Phi_out (x) I_{d_{L-1}}``, and,
    for two layers only, the cross block coupling row ``j`` of :math:`W_1`
    with column ``j`` of :math:`W_2` through ``Psi`` (``d_0 x d_2``).

    Parameters
    ----------
    dims : sequence of int
        ``(d_0, d_1, ..., d_L)``, ``L >= 2``.
    Phi_in : tensor (d_0, d_0)
    Phi_out : tensor (d_L, d_L)
    phi : sequence of float, length L - 2, default=()
    Psi : tensor (d_0, d_L) or None
        Only for ``L = 2``.

    Notes
    -----
    Matrix functions act on the reduced matrix obtained with every hidden
    width set to 1 (for ``L = 2``: ``[[Phi_in, Psi], [Psi^T, Phi_out]]``),
    so their cost does not depend on the hidden widths. The notebooks of the
    paper flatten in column-major order; we use torch's row-major layout, so
    the Kronecker factors appear in the mirrored order.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.optim import StructuredCurvature
    >>> C = StructuredCurvature((2, 3, 1), torch.eye(2, dtype=torch.float64),
    ...                         torch.eye(1, dtype=torch.float64))
    >>> C.to_dense().shape
    torch.Size([9, 9])
    """

    def __init__(self, dims, Phi_in, Phi_out, phi=(), Psi=None):
        self.dims = tuple(int(d) for d in dims)
        if len(self.dims) < 3:
            raise ValueError(f"dims needs at least two layers; got {dims!r}.")
        L = len(self.dims) - 1
        if len(tuple(phi)) != L - 2:
            raise ValueError(f"phi needs {L - 2} hidden-layer scalars.")
        if Psi is not None and L != 2:
            raise ValueError("Psi (the cross block) is defined for two layers only.")
        self.Phi_in, self.Phi_out = Phi_in, Phi_out
        self.phi = [float(v) for v in phi]
        self.Psi = Psi

    @classmethod
    def from_gradients(cls, grads, cross=True):
        """Orbit-averaged factors of ``E[g g^T]`` from gradient lists.

        Parameters
        ----------
        grads : list of lists of tensors
            ``R`` gradients, each the list ``[G_1, ..., G_L]`` of layer
            gradient matrices.
        cross : bool, default=True
            Estimate ``Psi`` (two layers only).
        """
        R = len(grads)
        Gs = [[G.double() for G in g] for g in grads]
        dims = [Gs[0][0].shape[1]] + [G.shape[0] for G in Gs[0]]
        L = len(dims) - 1
        d1, dl1 = dims[1], dims[L - 1]
        Phi_in = sum(g[0].T @ g[0] for g in Gs) / (d1 * R)
        Phi_out = sum(g[-1] @ g[-1].T for g in Gs) / (dl1 * R)
        phi = [
            float(sum((g[l] ** 2).sum() for g in Gs)) / (dims[l + 1] * dims[l] * R)
            for l in range(1, L - 1)
        ]
        Psi = None
        if L == 2 and cross:
            Psi = sum(g[0].T @ g[1].T for g in Gs) / (d1 * R)
        return cls(dims, Phi_in, Phi_out, phi, Psi)

    def _reduced(self):
        d0, dL = self.dims[0], self.dims[-1]
        Psi = self.Psi
        if Psi is None:
            Psi = torch.zeros(d0, dL, dtype=self.Phi_in.dtype)
        return torch.cat(
            [torch.cat([self.Phi_in, Psi], 1), torch.cat([Psi.T, self.Phi_out], 1)], 0
        )

    def power(self, p, damping=0.0):
        """``(C + damping I)^p`` as a new StructuredCurvature (pseudo for p < 0)."""
        d0 = self.dims[0]
        eye = lambda k: torch.eye(k, dtype=self.Phi_in.dtype)  # noqa: E731
        phi = [_scalar_fn(v + damping, p) for v in self.phi]
        if len(self.dims) == 3 and self.Psi is not None:
            M = self._reduced() + damping * eye(self._reduced().shape[0])
            F = _sym_fn(M, p)
            return StructuredCurvature(
                self.dims, F[:d0, :d0], F[d0:, d0:], phi, F[:d0, d0:]
            )
        return StructuredCurvature(
            self.dims,
            _sym_fn(self.Phi_in + damping * eye(d0), p),
            _sym_fn(self.Phi_out + damping * eye(self.dims[-1]), p),
            phi,
            None,
        )

    def inverse(self):
        """The (Moore-Penrose) pseudo-inverse."""
        return self.power(-1.0)

    def sqrt(self):
        """The PSD square root."""
        return self.power(0.5)

    def matvec_layers(self, Gs):
        """``C`` applied to the layer matrices ``[G_1, ..., G_L]``."""
        out = [None] * len(Gs)
        out[0] = Gs[0] @ self.Phi_in
        out[-1] = self.Phi_out @ Gs[-1]
        if self.Psi is not None:
            out[0] = out[0] + Gs[1].T @ self.Psi.T
            out[1] = out[1] + self.Psi.T @ Gs[0].T
        for l, v in enumerate(self.phi, start=1):
            out[l] = v * Gs[l]
        return out

    def _split(self, vec):
        Gs, k = [], 0
        for a, b in zip(self.dims[:-1], self.dims[1:]):
            Gs.append(vec[k : k + a * b].reshape(b, a))
            k += a * b
        return Gs

    def matvec(self, vec):
        """``C @ vec`` for a flat vector in the row-major layer layout."""
        return torch.cat([G.reshape(-1) for G in self.matvec_layers(self._split(vec))])

    def to_dense(self):
        """The full ``p x p`` matrix."""
        n = sum(a * b for a, b in zip(self.dims[:-1], self.dims[1:]))
        eye = torch.eye(n, dtype=self.Phi_in.dtype)
        return torch.stack([self.matvec(eye[i]) for i in range(n)], 1)

    @classmethod
    def from_dense(cls, dims, C, cross=True):
        """Read the factors back from a dense matrix of this structure."""
        dims = tuple(int(d) for d in dims)
        L = len(dims) - 1
        sizes = [a * b for a, b in zip(dims[:-1], dims[1:])]
        offs = [0]
        for s in sizes:
            offs.append(offs[-1] + s)
        d0, d1, dl1 = dims[0], dims[1], dims[L - 1]
        B1 = C[offs[0] : offs[1], offs[0] : offs[1]]
        Phi_in = sum(
            B1[j * d0 : (j + 1) * d0, j * d0 : (j + 1) * d0] for j in range(d1)
        )
        Phi_in = Phi_in / d1
        BL = C[offs[L - 1] : offs[L], offs[L - 1] : offs[L]]
        Phi_out = BL[::dl1, ::dl1].clone()
        phi = [
            float(
                torch.diagonal(C[offs[l] : offs[l + 1], offs[l] : offs[l + 1]]).mean()
            )
            for l in range(1, L - 1)
        ]
        Psi = None
        if L == 2 and cross:
            X = C[offs[0] : offs[1], offs[1] : offs[2]]  # rows (j, i), cols (k, j)
            Psi = X[:d0, ::d1].clone()  # hidden unit j = 0
        return cls(dims, Phi_in, Phi_out, phi, Psi)


class SyMO(torch.optim.Optimizer):
    r"""SyMO: preconditioning by the symmetry-structured global curvature.

    For a bias-free MLP ``Linear -> act -> ... -> Linear``, every step
    estimates the factors of :class:`StructuredCurvature` from the gradient
    (orbit averaging of :math:`gg^\top` over hidden-unit permutations), keeps
    a bias-corrected EMA of them, and steps
    :math:`\Delta\theta = -\eta_t (C + \epsilon I)^{p} g` with ``p = power``
    (default -1/2, Adam's power), computed on the reduced matrix.

    Parameters
    ----------
    module : torch.nn.Module
        Its parameters must all be weights of bias-free ``nn.Linear`` layers
        (at least two), applied in ``module.modules()`` order.
    lr : float, default=0.09
    factor_decay : float, default=0.95
        EMA rate of the factors (the notebooks' ``betah``).
    damping : float, default=0.0
    power : float, default=-0.5
    lr_decay : float or None, default=None
        ``eta_t = lr * lr_decay**t`` (the notebooks use 0.91); None keeps
        ``lr`` constant (use the estimators' ``scheduler`` instead).
    cross : bool, default=True
        Use the cross block ``Psi`` (two layers only).

    Notes
    -----
    Follows the bias-free tanh/linear notebooks of Bernacchia (2025):
    scalars for hidden-to-hidden blocks and no cross blocks beyond two
    layers. The paper's general structure (ReLU, biases, more layer-pair
    terms) is not implemented: a module with biases or non-Linear parameters
    raises ``ValueError``. Ours: row-major layout (the notebooks convert from
    column-major), float32 updates with float64 factor algebra.

    References
    ----------
    Bernacchia, "Global curvature for second-order optimization of neural
    networks", ICML 2025.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.optim import SyMO
    >>> _ = torch.manual_seed(0)
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 4, bias=False), torch.nn.Tanh(),
    ...                           torch.nn.Linear(4, 2, bias=False))
    >>> opt = SyMO(net, lr=0.05)
    >>> X, Y = torch.randn(20, 3), torch.randn(20, 2)
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = torch.nn.functional.mse_loss(net(X), Y)
    ...     loss.backward()
    ...     return loss
    >>> l0 = float(opt.step(closure))
    >>> all(float(opt.step(closure)) < l0 for _ in range(3))
    True
    """

    def __init__(
        self,
        module,
        lr=0.09,
        factor_decay=0.95,
        damping=0.0,
        power=-0.5,
        lr_decay=None,
        cross=True,
    ):
        if not isinstance(module, nn.Module):
            raise TypeError(f"SyMO needs the module; got {type(module).__name__}.")
        layers = [m for m in module.modules() if isinstance(m, nn.Linear)]
        if len(layers) < 2:
            raise ValueError("SyMO needs an MLP with at least two nn.Linear layers.")
        if any(la.bias is not None for la in layers):
            raise ValueError(
                "SyMO covers bias-free MLPs only: build the Linear layers with "
                "bias=False (the default MLP of the estimators has biases; pass a "
                "module factory)."
            )
        weights = {id(la.weight) for la in layers}
        if any(id(p) not in weights for p in module.parameters()):
            raise ValueError(
                "SyMO covers bias-free MLPs only: the module has parameters "
                "outside nn.Linear weights (norms, embeddings...)."
            )
        for a, b in zip(layers[:-1], layers[1:]):
            if a.out_features != b.in_features:
                raise ValueError("SyMO needs the Linear layers chained in order.")
        if not 0 <= factor_decay < 1:
            raise ValueError(f"factor_decay must be in [0, 1); got {factor_decay!r}.")
        super().__init__([la.weight for la in layers], dict(lr=lr))
        self.factor_decay = float(factor_decay)
        self.damping = float(damping)
        self.power = float(power)
        self.lr_decay = lr_decay
        self.cross = bool(cross)
        self.steps = 0
        self._factors = None

    def _weights(self):
        return self.param_groups[0]["params"]

    def state_dict(self):
        """Also holds the step count and the factor EMAs."""
        sd = super().state_dict()
        sd["symo"] = {"steps": self.steps, "factors": self._factors}
        return sd

    def load_state_dict(self, state_dict):
        """Inverse of :meth:`state_dict`."""
        state_dict = dict(state_dict)
        extra = state_dict.pop("symo", None)
        super().load_state_dict(state_dict)
        if extra is not None:
            self.steps = extra["steps"]
            self._factors = extra["factors"]

    def curvature(self):
        """The current bias-corrected :class:`StructuredCurvature` (or None)."""
        if self._factors is None:
            return None
        c = 1.0 / (1.0 - self.factor_decay**self.steps)
        f = self._factors
        return StructuredCurvature(
            f["dims"],
            f["Phi_in"] * c,
            f["Phi_out"] * c,
            [v * c for v in f["phi"]],
            None if f["Psi"] is None else f["Psi"] * c,
        )

    @torch.no_grad()
    def step(self, closure=None):
        """One SyMO step; returns the closure's loss (if given)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        Ws = self._weights()
        if any(W.grad is None for W in Ws):
            return loss
        Gs = [W.grad for W in Ws]
        new = StructuredCurvature.from_gradients([Gs], cross=self.cross)
        b = self.factor_decay
        if self._factors is None:
            self._factors = {
                "dims": new.dims,
                "Phi_in": (1 - b) * new.Phi_in,
                "Phi_out": (1 - b) * new.Phi_out,
                "phi": [(1 - b) * v for v in new.phi],
                "Psi": None if new.Psi is None else (1 - b) * new.Psi,
            }
        else:
            f = self._factors
            f["Phi_in"] = b * f["Phi_in"] + (1 - b) * new.Phi_in
            f["Phi_out"] = b * f["Phi_out"] + (1 - b) * new.Phi_out
            f["phi"] = [b * u + (1 - b) * v for u, v in zip(f["phi"], new.phi)]
            if new.Psi is not None:
                f["Psi"] = b * f["Psi"] + (1 - b) * new.Psi
        self.steps += 1
        P = self.curvature().power(self.power, self.damping)
        lr = self.param_groups[0]["lr"]
        if self.lr_decay is not None:
            lr = lr * float(self.lr_decay) ** (self.steps - 1)
        for W, D in zip(Ws, P.matvec_layers([G.double() for G in Gs])):
            W.add_(D.to(W.dtype), alpha=-lr)
        return loss.detach() if torch.is_tensor(loss) else loss
