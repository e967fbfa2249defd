"""Orthogonalization and the duality maps of modular duality.

The duality map of a layer sends a gradient (a dual vector) to the unit-norm
direction of steepest ascent in the layer's own norm (Bernstein & Newhouse,
2025). For a linear layer that norm is the RMS->RMS operator norm, whose dual
is the (scaled) polar factor :math:`UV^\\top` of the gradient; Newton-Schulz
iterations approximate that factor with matrix products only.
"""

import math

import torch

__all__ = [
    "NS_COEFFICIENTS",
    "conv2d_norm",
    "dualize_conv2d",
    "dualize_embed",
    "dualize_linear",
    "dualize_vector",
    "embed_norm",
    "fast_ns_dtype",
    "linear_norm",
    "ns_dtype_probe",
    "newton_schulz",
    "polar",
]

#: Named coefficient sets for :func:`newton_schulz`.
NS_COEFFICIENTS = {
    # Keller Jordan's quintic, tuned to maximize the slope at 0 (used by Muon).
    "muon": (3.4445, -4.7750, 2.0315),
    # The classical cubic Newton-Schulz iteration, converges to U V^T.
    "cubic": (1.5, -0.5, 0.0),
    # The quintic Taylor iteration, converges to U V^T.
    "quintic": (3.0, -16.0 / 5.0, 6.0 / 5.0),
}


def _resolve_coefficients(coefficients, steps):
    if isinstance(coefficients, str):
        if coefficients not in NS_COEFFICIENTS:
            raise ValueError(
                f"Unknown coefficients={coefficients!r}; use one of "
                f"{sorted(NS_COEFFICIENTS)} or a tuple (a, b, c)."
            )
        return [NS_COEFFICIENTS[coefficients]] * steps
    coefficients = list(coefficients)
    if len(coefficients) == 3 and all(
        isinstance(c, (int, float)) for c in coefficients
    ):
        return [tuple(float(c) for c in coefficients)] * steps
    table = [tuple(float(c) for c in abc) for abc in coefficients]
    if any(len(abc) != 3 for abc in table):
        raise ValueError(
            "coefficients must be a name, one (a, b, c) tuple, or a list of "
            "(a, b, c) tuples (one per step)."
        )
    return table


_NS_DTYPE_CACHE = {}


def ns_dtype_probe(device="cpu", size=256, repeats=3):
    """Median seconds of 5 Newton-Schulz steps on a ``size`` square matrix.

    Returns
    -------
    times : dict
        ``{torch.float32: seconds, torch.bfloat16: seconds}``.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.linalg import ns_dtype_probe
    >>> sorted(str(d) for d in ns_dtype_probe(size=32, repeats=1))
    ['torch.bfloat16', 'torch.float32']
    """
    import statistics
    import time

    gen = torch.Generator().manual_seed(0)
    G = torch.randn(size, size, generator=gen).to(device)
    times = {}
    for dtype in (torch.float32, torch.bfloat16):
        newton_schulz(G, dtype=dtype)  # warm-up
        runs = []
        for _ in range(repeats):
            tic = time.perf_counter()
            newton_schulz(G, dtype=dtype)
            if G.device.type == "cuda":  # pragma: no cover - GPU only
                torch.cuda.synchronize()
            runs.append(time.perf_counter() - tic)
        times[dtype] = statistics.median(runs)
    return times


def fast_ns_dtype(device="cpu", size=256):
    """The Newton-Schulz dtype of ``ns_dtype="auto"`` on ``device``.

    bfloat16 on CUDA. On a CPU, bfloat16 only where a one-off probe
    (:func:`ns_dtype_probe`: 5 steps on a square matrix, cached for the
    process) measures it at least 20% faster than float32. The probe runs
    at ``size`` rounded up to a power of two between 32 and 256 (the
    crossover depends on the size: bfloat16 units pay off on larger
    matrices; larger sizes reuse the 256 result, so a CPU without bfloat16
    units never pays for a large bfloat16 probe).

    Parameters
    ----------
    device : str or torch.device, default="cpu"
    size : int, default=256
        The smaller side of the matrices to orthogonalize.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.linalg import fast_ns_dtype
    >>> fast_ns_dtype("cpu") in (torch.float32, torch.bfloat16)
    True
    """
    device = torch.device(device)
    if device.type == "cuda":
        return torch.bfloat16
    bucket = min(256, max(32, 1 << max(int(size) - 1, 1).bit_length()))
    key = (device.type, bucket)
    if key not in _NS_DTYPE_CACHE:
        t = ns_dtype_probe(device, size=bucket)
        fast = t[torch.bfloat16] < 0.8 * t[torch.float32]
        _NS_DTYPE_CACHE[key] = torch.bfloat16 if fast else torch.float32
    return _NS_DTYPE_CACHE[key]


def _work_dtype(G, dtype):
    if isinstance(dtype, str) and dtype == "auto":
        if G.dtype == torch.float64:
            return torch.float64
        return fast_ns_dtype(G.device, size=min(G.shape[-2:]))
    if dtype is not None:
        return dtype
    if G.device.type == "cuda":
        return torch.bfloat16
    # float32 on CPU (bfloat16 matmul is far slower there); float64 stays.
    return torch.float64 if G.dtype == torch.float64 else torch.float32


def newton_schulz(G, steps=5, coefficients="muon", eps=1e-7, dtype=None):
    """Approximate the polar factor :math:`UV^\\top` of ``G`` by Newton-Schulz.

    Runs the odd polynomial iteration
    :math:`X \\leftarrow aX + b(XX^\\top)X + c(XX^\\top)^2X` from
    :math:`X_0 = G/(\\|G\\|_F + \\epsilon)`. Because the polynomial commutes
    with the SVD, it acts on each singular value separately and drives it
    towards 1 while keeping the singular vectors.

    Parameters
    ----------
    G : torch.Tensor of shape (..., m, n)
        One matrix or a batch of matrices.
    steps : int, default=5
        Number of iterations (ignored when ``coefficients`` is a table).
    coefficients : {"muon", "cubic", "quintic"}, tuple or list of tuples, \
            default="muon"
        ``(a, b, c)`` used at every step, or one tuple per step. ``"muon"``
        is Muon's quintic (3.4445, -4.7750, 2.0315): fast, but it does not
        converge; after 5 steps the singular values lie in about
        [0.68, 1.14] for inputs whose normalized singular values are at
        least 0.01. ``"cubic"`` and ``"quintic"`` converge to :math:`UV^\\top`.
    eps : float, default=1e-7
        Added to the Frobenius norm before normalizing.
    dtype : torch.dtype, "auto" or None, default=None
        Working dtype. ``None`` means bfloat16 on CUDA and float32 on CPU
        (float64 input stays float64); ``"auto"`` is :func:`fast_ns_dtype`
        (float64 input stays float64). The result has ``G``'s dtype.

    Returns
    -------
    X : torch.Tensor of the shape and dtype of ``G``

    References
    ----------
    .. [1] Bernstein, J. and Newhouse, L. "Modular Duality in Deep Learning",
       ICML 2025. arXiv:2410.21265.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.linalg import newton_schulz
    >>> G = torch.randn(8, 4, generator=torch.Generator().manual_seed(0))
    >>> S = torch.linalg.svdvals(newton_schulz(G, steps=30, coefficients="cubic"))
    >>> bool(torch.allclose(S, torch.ones(4), atol=1e-4))
    True
    """
    if G.ndim < 2:
        raise ValueError(
            f"newton_schulz needs a matrix (or a batch of matrices); got a tensor "
            f"of shape {tuple(G.shape)}."
        )
    table = _resolve_coefficients(coefficients, steps)
    X = G.to(_work_dtype(G, dtype))
    transposed = G.shape[-2] > G.shape[-1]
    if transposed:  # form the Gram matrix on the smaller side
        X = X.mT
    X = X / (torch.linalg.matrix_norm(X, keepdim=True) + eps)
    for a, b, c in table:
        A = X @ X.mT
        if X.ndim == 2:  # fused, in the same order as torch.optim.Muon
            B = torch.addmm(A, A, A, beta=b, alpha=c)
            X = torch.addmm(X, B, X, beta=a)
        else:
            B = torch.baddbmm(
                A.flatten(0, -3), A.flatten(0, -3), A.flatten(0, -3), beta=b, alpha=c
            ).reshape(A.shape)
            X = a * X + B @ X
    if transposed:
        X = X.mT
    return X.to(G.dtype)


def polar(G):
    """Exact polar factor :math:`UV^\\top` of ``G`` by the reduced SVD.

    Parameters
    ----------
    G : torch.Tensor of shape (..., m, n)

    Returns
    -------
    Q : torch.Tensor of the shape of ``G``
        :math:`UV^\\top` where :math:`G = U\\Sigma V^\\top` (reduced SVD). For
        a rank-deficient ``G`` the null directions are arbitrary, as in any SVD.

    Examples
    --------
    >>> import torch
    >>> from skalgos.torch.linalg import polar
    >>> Q = polar(torch.tensor([[2.0, 0.0], [0.0, -3.0]]))
    >>> Q.tolist()
    [[1.0, 0.0], [0.0, -1.0]]
    """
    U, _, Vh = torch.linalg.svd(G, full_matrices=False)
    return U @ Vh


def _orthogonalize(G, method, **ns_kwargs):
    if method == "svd":
        return polar(G)
    if method == "newton_schulz":
        return newton_schulz(G, **ns_kwargs)
    raise ValueError(f"method must be 'svd' or 'newton_schulz'; got {method!r}.")


def linear_norm(W):
    """RMS->RMS operator norm of a linear weight ``W`` of shape (d_out, d_in).

    :math:`\\|W\\|_{RMS\\to RMS} = \\sqrt{d_{in}/d_{out}}\\,\\sigma_{\\max}(W)`.
    """
    d_out, d_in = W.shape[-2], W.shape[-1]
    return math.sqrt(d_in / d_out) * torch.linalg.matrix_norm(W, ord=2)


def dualize_linear(G, *, method="svd", **ns_kwargs):
    """Duality map of a Linear layer (RMS->RMS operator norm).

    Parameters
    ----------
    G : torch.Tensor of shape (d_out, d_in)
        Gradient in torch's ``nn.Linear.weight`` layout.
    method : {"svd", "newton_schulz"}, default="svd"
        Exact polar factor, or its Newton-Schulz approximation
        (``ns_kwargs`` go to :func:`newton_schulz`).

    Returns
    -------
    D : torch.Tensor of shape (d_out, d_in)
        :math:`\\sqrt{d_{out}/d_{in}}\\,UV^\\top`, which has unit RMS->RMS norm
        and maximizes :math:`\\langle G, D\\rangle` over that unit ball.
    """
    d_out, d_in = G.shape[-2], G.shape[-1]
    return math.sqrt(d_out / d_in) * _orthogonalize(G, method, **ns_kwargs)


def embed_norm(W):
    """l1->RMS norm of an embedding table ``W`` of shape (n_tokens, d_embed).

    Inputs are one-hot, so the norm is the largest RMS norm of a token's row.
    """
    return (W.pow(2).mean(dim=-1).sqrt()).max()


def dualize_embed(G, eps=0.0):
    """Duality map of an Embedding (l1->RMS norm): every row to unit RMS.

    Parameters
    ----------
    G : torch.Tensor of shape (n_tokens, d_embed)
        Gradient in torch's ``nn.Embedding.weight`` layout (one row per token;
        the paper and modula store the transpose, one column per token).
    eps : float, default=0.0
        Added to each row norm.

    Returns
    -------
    D : torch.Tensor of shape (n_tokens, d_embed)
        Row ``j`` is :math:`\\sqrt{d_{embed}}\\,G_j/\\|G_j\\|_2`; rows of
        tokens absent from the batch (all zero) stay zero.
    """
    d = G.shape[-1]
    norms = torch.linalg.vector_norm(G, dim=-1, keepdim=True)
    safe = torch.where(norms > 0, norms + eps, torch.ones_like(norms))
    return torch.where(norms > 0, G * (math.sqrt(d) / safe), torch.zeros_like(G))


def conv2d_norm(W):
    """Norm of a conv filter of shape (d_out, d_in, k, k): k^2 max_ij slice norm.

    Each spatial slice ``W[:, :, i, j]`` is measured in the RMS->RMS norm.
    """
    k2 = W.shape[-1] * W.shape[-2]
    slices = W.permute(2, 3, 0, 1)
    return k2 * linear_norm(slices).max()


def dualize_conv2d(G, mode="per_slice", *, method="svd", **ns_kwargs):
    """Duality map of a Conv2d filter of shape (d_out, d_in, kh, kw).

    Parameters
    ----------
    G : torch.Tensor of shape (d_out, d_in, kh, kw)
    mode : {"per_slice", "flatten"}, default="per_slice"
        ``"per_slice"`` is the paper's map for the norm of :func:`conv2d_norm`:
        each spatial slice gets :math:`\\frac{1}{k^2}\\sqrt{d_{out}/d_{in}}
        \\,U_{ij}V_{ij}^\\top`. ``"flatten"`` is what Muon does: view the filter
        as a (d_out, d_in*kh*kw) matrix and apply :func:`dualize_linear`.
    method : {"svd", "newton_schulz"}, default="svd"

    Returns
    -------
    D : torch.Tensor of the shape of ``G``
    """
    if G.ndim != 4:
        raise ValueError(f"dualize_conv2d needs a 4-D filter; got {tuple(G.shape)}.")
    d_out, d_in, kh, kw = G.shape
    if mode == "flatten":
        return dualize_linear(
            G.reshape(d_out, d_in * kh * kw), method=method, **ns_kwargs
        ).reshape(G.shape)
    if mode != "per_slice":
        raise ValueError(f"mode must be 'per_slice' or 'flatten'; got {mode!r}.")
    slices = G.permute(2, 3, 0, 1)  # (kh, kw, d_out, d_in): one matrix per slice
    D = dualize_linear(slices, method=method, **ns_kwargs) / (kh * kw)
    return D.permute(2, 3, 0, 1).contiguous()


def dualize_vector(g, eps=0.0):
    """Duality map of a vector parameter (bias, norm gain) in the RMS norm.

    Returns :math:`\\sqrt{d}\\,g/\\|g\\|_2` (zero stays zero). This atom is our
    choice for 1-D parameters in ``Muon(modular=True)``.
    """
    return dualize_embed(g.reshape(1, -1), eps=eps).reshape(g.shape)
